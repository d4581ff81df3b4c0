#include "verify/step_lists.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include <cmath>
#include <charconv>

#include "util/error.hpp"
#include "util/open_files.hpp"
#include "verify/json_view.hpp"

namespace trainio::verify {

void Series::add(double seconds, std::uint64_t s, std::uint64_t e) {
  ++n;
  sum += seconds;
  if (head.size() < s) head.push_back(seconds);
  if (e > 0) {
    if (tail.size() == e) tail.erase(tail.begin());
    tail.push_back(seconds);
  }
  ns.add_value(seconds <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(seconds * 1e9)));
}

namespace {

std::optional<std::uint64_t> epoch_of(std::string_view key) {
  std::uint64_t v = 0;
  if (key.empty() || key.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  if (std::from_chars(key.data(), key.data() + key.size(), v).ec != std::errc()) throw JsonError(fmt::format("an epoch '{}' out of range", key));
  return v;
}

// DLIO's per-rank file: {..., "<epoch>": {"load": {"block1": [...], "eval": [...]}, "proc": ...,
// "throughput": {"block1": x}, "au": ..., "compute": ..., "barrier": ...}, ...}; other keys are
// the host's and are skipped.
class Walker {
 public:
  Walker(std::uint64_t s, std::uint64_t e) : s_(s), e_(e) {}
  StepLists lists;

  void walk(const JsonValue& root) {
    if (!root.is_object()) return;
    root.members([&](std::string_view key, const JsonValue& v) {
      const auto epoch = epoch_of(key);
      if (epoch && v.is_object()) walk_epoch(*epoch, v);
    });
  }

  void walk_epoch(std::uint64_t epoch, const JsonValue& lists_of_epoch) {
    lists_of_epoch.members([&](std::string_view list, const JsonValue& blocks) {
      if (!blocks.is_object()) return;
      if (list == "au" || list == "throughput") {
        blocks.members([&](std::string_view name, const JsonValue& v) {
          if (!v.is_number() && !v.is_null()) return;
          StepBlock* b = block_of(epoch, name).second;
          if (b == nullptr) return;
          (list == "au" ? b->reported_au : b->reported_throughput) = v.is_null() ? std::nullopt : std::optional<double>(v.f64());
          b->reported = true;
        });
        return;
      }
      Series StepBlock::*field = list == "load"      ? &StepBlock::load
                                 : list == "proc"    ? &StepBlock::proc
                                 : list == "compute" ? &StepBlock::compute
                                 : list == "barrier" ? &StepBlock::barrier
                                                     : nullptr;
      blocks.members([&](std::string_view name, const JsonValue& values) {
        if (!values.is_array()) return;
        bool resolved = false;
        std::pair<StepPhase*, StepBlock*> at{nullptr, nullptr};
        values.elements([&](const JsonValue& v) {
          if (!v.is_number() && !v.is_null()) return;
          if (!resolved) {  // as the values come: a list of no values names no block
            at = block_of(epoch, name);
            resolved = true;
          }
          if (at.second == nullptr || field == nullptr || !v.is_number()) return;
          const double x = v.f64();
          (at.second->*field).add(x, s_, e_);
          (at.first->whole.*field).add(x, s_, e_);
        });
      });
    });
  }

 private:

  // The phase and block a key names: "block<n>" of training, or "eval".
  std::pair<StepPhase*, StepBlock*> block_of(std::uint64_t epoch, std::string_view name) {
    if (name == "eval") {
      StepPhase& p = lists[{epoch, "eval"}];
      if (p.blocks.empty()) p.blocks.resize(1);
      return {&p, &p.blocks[0]};
    }
    if (!name.starts_with("block") || name.size() < 6) return {nullptr, nullptr};
    const auto index = epoch_of(name.substr(5));
    if (!index || *index == 0 || *index > 1'000'000) return {nullptr, nullptr};
    StepPhase& p = lists[{epoch, "train"}];
    if (p.blocks.size() < *index) p.blocks.resize(*index);
    return {&p, &p.blocks[*index - 1]};
  }

  std::uint64_t s_, e_;
};

}  // namespace

StepLists read_step_lists(const std::string& path, std::uint64_t s, std::uint64_t e) {
  std::string text;
  if (!read_text_file(path, text))
    throw data_error(fmt::format("the per-rank step lists '{}' are missing", path),
                     "every run writes one per rank: this folder's run was cut short, or the file was removed");
  Walker walker(s, e);
  try {
    JsonDoc doc;
    doc.parse(text);
    walker.walk(doc.root());
  } catch (const JsonError& ex) {
    throw data_error(fmt::format("the per-rank step lists '{}' are damaged: {}", path, ex.what()),
                     "the step lists are the evidence of AU and throughput: a damaged file cannot be verified");
  }
  return std::move(walker.lists);
}

StepListsReader::StepListsReader(std::string path, std::uint64_t s, std::uint64_t e) : path_(std::move(path)), s_(s), e_(e) {
  if (!stream_.open(path_)) {
    const int error_number = errno;
    if (!util::absent(error_number))
      throw io_error(fmt::format("cannot open the per-rank step lists '{}': {}", path_, std::strerror(error_number)));
    throw data_error(fmt::format("the per-rank step lists '{}' are missing", path_),
                     "every run writes one per rank: this folder's run was cut short, or the file was removed");
  }
  try {
    stream_.enter('{');
  } catch (const JsonError& ex) {
    damaged(ex.what());
  }
}

void StepListsReader::damaged(const std::string& what) const {
  throw data_error(fmt::format("the per-rank step lists '{}' are damaged: {}", path_, what),
                   "the step lists are the evidence of AU and throughput: a damaged file cannot be verified");
}

const StepLists& StepListsReader::epoch(std::uint64_t epoch) {
  try {
    while (!done_ && (!read_ || epoch_ < epoch)) {
      if (!stream_.next(&key_)) {
        stream_.end();
        done_ = true;
        break;
      }
      text_.clear();
      stream_.value(&text_);
      const auto e = epoch_of(key_);
      if (!e) continue;  // the host's keys
      if (read_ && *e <= epoch_)
        damaged(fmt::format("epoch {}'s lists come after epoch {}'s (verify reads them in the order the run writes them)", *e, epoch_));
      doc_.parse(text_);
      epoch_ = *e;
      read_ = true;
      lists_.clear();
      if (doc_.root().is_object()) {
        Walker walker(s_, e_);
        walker.walk_epoch(epoch_, doc_.root());
        lists_ = std::move(walker.lists);
      }
    }
  } catch (const JsonError& ex) {
    damaged(ex.what());
  }
  return read_ && epoch_ == epoch ? lists_ : none_;
}

}  // namespace trainio::verify
