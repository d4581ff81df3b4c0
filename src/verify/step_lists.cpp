#include "verify/step_lists.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "util/error.hpp"

namespace trainio::verify {

void Series::add(double seconds, std::uint64_t s, std::uint64_t e) {
  ++n;
  sum += seconds;
  if (head.size() < s) head.push_back(seconds);
  if (e > 0) {
    tail.push_back(seconds);
    if (tail.size() > e) tail.pop_front();
  }
  ns.add_value(seconds <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(seconds * 1e9)));
}

namespace {

using json = nlohmann::json;

bool is_epoch(const std::string& key) {
  return !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
}

// Walks DLIO's per-rank file: {..., "<epoch>": {"load": {"block1": [...], "eval": [...]}, "proc":
// ..., "throughput": {"block1": x}, "au": ..., "compute": ..., "barrier": ...}, ...}.
class Walker final : public nlohmann::json_sax<json> {
 public:
  Walker(std::uint64_t s, std::uint64_t e) : s_(s), e_(e) {}
  StepLists lists;

  bool null() override { return scalar(std::nullopt); }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t v) override { return scalar(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(v); }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t at, const std::string&, const nlohmann::detail::exception& ex) override {
    error_ = fmt::format("not valid JSON at byte {}: {}", at, ex.what());
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  struct Frame {
    bool array;
    std::string key;  // its key in the enclosing object
  };

  bool open(bool array) {
    frames_.push_back({array, frames_.empty() || frames_.back().array ? std::string() : key_});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  // The phase and block a key names: "block<n>" of training, or "eval".
  StepBlock* block_of(std::uint64_t epoch, const std::string& name) {
    if (name == "eval") {
      StepPhase& p = lists[{epoch, "eval"}];
      if (p.blocks.empty()) p.blocks.resize(1);
      return &p.blocks[0];
    }
    if (!name.starts_with("block") || name.size() < 6 || !is_epoch(name.substr(5))) return nullptr;
    const auto index = std::stoull(name.substr(5));
    if (index == 0 || index > 1'000'000) return nullptr;
    StepPhase& p = lists[{epoch, "train"}];
    if (p.blocks.size() < index) p.blocks.resize(index);
    return &p.blocks[index - 1];
  }

  bool scalar(std::optional<double> v) {
    // A step's value: top object > epoch > list name > block > [values].
    if (frames_.size() == 4 && frames_[3].array && is_epoch(frames_[1].key)) {
      const std::uint64_t epoch = std::stoull(frames_[1].key);
      const std::string& list = frames_[2].key;
      StepBlock* b = block_of(epoch, frames_[3].key);
      if (b == nullptr || !v) return true;
      StepPhase& phase = lists[{epoch, frames_[3].key == "eval" ? "eval" : "train"}];
      Series StepBlock::*field = list == "load"      ? &StepBlock::load
                                 : list == "proc"    ? &StepBlock::proc
                                 : list == "compute" ? &StepBlock::compute
                                 : list == "barrier" ? &StepBlock::barrier
                                                     : nullptr;
      if (field == nullptr) return true;
      (b->*field).add(*v, s_, e_);
      (phase.whole.*field).add(*v, s_, e_);
    } else if (frames_.size() == 3 && !frames_[2].array && is_epoch(frames_[1].key) &&
               (frames_[2].key == "au" || frames_[2].key == "throughput")) {
      StepBlock* b = block_of(std::stoull(frames_[1].key), key_);
      if (b == nullptr) return true;
      (frames_[2].key == "au" ? b->reported_au : b->reported_throughput) = v;
      b->reported = true;
    }
    return true;
  }

  std::uint64_t s_, e_;
  std::vector<Frame> frames_;
  std::string key_;
  std::string error_;
};

}  // namespace

StepLists read_step_lists(const std::string& path, std::uint64_t s, std::uint64_t e) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw data_error(fmt::format("the per-rank step lists '{}' are missing", path),
                     "every run writes one per rank: this folder's run was cut short, or the file was removed");
  Walker walker(s, e);
  if (!json::sax_parse(in, &walker))
    throw data_error(fmt::format("the per-rank step lists '{}' are damaged: {}", path, walker.error()),
                     "the step lists are the evidence of AU and throughput: a damaged file cannot be verified");
  return std::move(walker.lists);
}

}  // namespace trainio::verify
