#include "verify/verify_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "util/error.hpp"
#include "util/paths.hpp"
#include "verify/async_checkpoint_checks.hpp"
#include "verify/reshard_checks.hpp"
#include "verify/capacity_checks.hpp"
#include "verify/json_stream.hpp"
#include "verify/json_view.hpp"
#include "verify/run_totals.hpp"

namespace trainio::verify {

namespace {

// summary.json in two parts: everything but the entries of trainio.epochs (its size grows with
// the epochs: a 1,000-epoch run's is most of 20 MiB), held and parsed; and those entries, read one
// at a time from the file as the epochs are checked.
class Summary {
 public:
  Summary(const std::string& folder, const std::string& path) : path_(path) {
    JsonStream s;
    if (!s.open(path)) throw usage_error(fmt::format("'{}' holds no summary.json", folder), "name a results folder of trainio run");
    try {
      // The first "trainio" and its first "epochs": the ones a lookup by key finds.
      bool trainio_seen = false, epochs_seen = false;
      std::string key;
      auto member = [&](bool first, const std::string& k) { text_ += fmt::format("{}\"{}\":", first ? "" : ",", k); };
      s.enter('{');
      text_ += '{';
      for (bool first = true; s.next(&key); first = false) {
        member(first, key);
        if (key != "trainio" || trainio_seen || s.peek() != '{') {
          s.value(&text_);
          continue;
        }
        trainio_seen = true;
        s.enter('{');
        text_ += '{';
        std::string inner;
        for (bool first_inner = true; s.next(&inner); first_inner = false) {
          member(first_inner, inner);
          if (inner == "epochs" && !epochs_seen && s.peek() == '[') {
            epochs_seen = true;
            epochs_at_ = s.offset();
            s.value(nullptr);
            text_ += "[]";
          } else {
            s.value(&text_);
          }
        }
        text_ += '}';
      }
      text_ += '}';
      s.end();
      doc_.parse(text_);
      if (epochs_at_ > 0) {
        epochs_.open(path_, epochs_at_);
        epochs_.enter('[');
      }
    } catch (const JsonError& e) {
      invalid(e.what());
    }
  }
  JsonValue root() const { return doc_.root(); }

  // The next entry of trainio.epochs, valid until the next call; invalid after the last.
  JsonValue next_epoch() {
    if (epochs_at_ == 0 || done_) return {};
    try {
      if (!epochs_.next(nullptr)) {
        done_ = true;
        return {};
      }
      entry_text_.clear();
      epochs_.value(&entry_text_);
      entry_.parse(entry_text_);
    } catch (const JsonError& e) {
      invalid(e.what());
    }
    ++read_;
    return entry_.root();
  }
  // The entries of trainio.epochs: those read, and those left.
  std::uint64_t epochs() {
    while (next_epoch().valid()) {
    }
    return read_;
  }

 private:
  [[noreturn]] void invalid(const std::string& what) const {
    throw usage_error(fmt::format("'{}' is not valid JSON: {}", path_, what),
                      "the run did not finish writing its results, or the file was edited: rerun it or leave it out");
  }
  std::string path_, text_, entry_text_;
  JsonDoc doc_, entry_;
  std::uint64_t epochs_at_ = 0, read_ = 0;
  bool done_ = false;
  JsonStream epochs_;
};

}  // namespace

std::string verify_run(const std::string& folder, Checks& checks) {
  const std::string path = util::join(folder, "summary.json");
  Summary reader(folder, path);
  const JsonValue summary = reader.root();
  if (!summary.is_object() || !summary.contains("metric") || !summary.at("metric").is_object())
    throw usage_error(fmt::format("'{}' is not a trainio or DLIO summary (no \"metric\")", path),
                      "give results folders written by trainio run (or DLIO)");
  const JsonValue ranks = find(summary, "trainio/context/ranks");
  if (!ranks.valid() || !ranks.is_unsigned() || ranks.u64() == 0 || ranks.u64() > 1'000'000'000)
    throw usage_error(fmt::format("'{}' is not a trainio summary (no trainio.context.ranks)", path),
                      "verify needs the records a trainio run keeps; DLIO's results have none");
  const int n = static_cast<int>(ranks.u64());
  const JsonValue size = find(summary, "metric/checkpoint_size_GB");
  std::unique_ptr<AsyncChecks> async = AsyncChecks::wanted(summary) ? std::make_unique<AsyncChecks>(n, checks) : nullptr;
  CsvChecks csvs(folder, checks);
  RunTotals totals;
  // Each epoch once every rank's lines of it are in: its entry of the summary, its CSV rows, its
  // flush overlap; then only the sums over epochs are kept.
  read_ranks(folder, n, size.valid() && size.is_number() ? size.f64() : 0.0, totals, checks, async.get(), [&](RunTotals& t) {
    const bool train = std::any_of(t.phases.begin(), t.phases.end(), [](const auto& p) { return p.first.second == "train"; });
    JsonValue entry;
    if (train) {
      entry = reader.next_epoch();
      if (entry.valid()) check_summary_epoch(entry, t.summary_epochs++, t, checks);
    }
    csvs.epoch(t);
    if (async)
      for (const auto& [key, p] : t.phases)
        if (key.second == "train") async->epoch(p.epoch, entry);
    for (const auto& [key, p] : t.phases) t.epochs.add(p);
  });
  totals.summary_epochs = reader.epochs();  // those checked and any left
  check_summary(folder, summary, totals, checks);
  csvs.finish(totals);
  check_capacity(folder, summary, totals, checks);
  if (async) async->finish(summary);
  check_reshard_loads(folder, summary, n, checks);
  if (totals.incomplete_ranks == 0) return {};
  const JsonValue reason = find(summary, "trainio/stopped/reason");
  const JsonValue epoch = find(summary, "trainio/stopped/epoch");
  return fmt::format("incomplete: {} stopped the run in epoch {}; these are the figures of what ran before",
                     reason.valid() && reason.is_string() ? reason.str() : "a signal", epoch.valid() ? std::string(epoch.raw()) : "?");
}

}  // namespace trainio::verify
