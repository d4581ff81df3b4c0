// Reading every rank's evidence, and checking each rank's own files against it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <mutex>
#include <barrier>
#include <memory>
#include <thread>

#include "util/error.hpp"
#include "util/paths.hpp"
#include "util/open_files.hpp"
#include "verify/run_totals.hpp"
#include "verify/async_checkpoint_checks.hpp"
#include "verify/step_lists.hpp"

namespace trainio::verify {

namespace {

using json = nlohmann::json;

// A rank's <rank>_per_epoch_stats.json read epoch by epoch, in the order the run writes them: the
// member of the latest epoch asked for is held, and the checkpoints' entries of every member read
// until a checkpoint line asks for them (an asynchronous save's lines may come epochs later). A
// missing file, or from a damage on, gives no entries: each figure is then reported absent.
class EpochStats {
 public:
  explicit EpochStats(const std::string& path) {
    try {
      if (stream_.open(path)) {
        stream_.enter('{');
        return;
      }
    } catch (const JsonError&) {
    }
    done_ = true;
  }
  // The entry `key` of `epoch`'s member; invalid when absent (or when the epoch is behind the
  // member held: the run writes an epoch's phases before the next epoch's).
  JsonValue at(std::uint64_t epoch, std::string_view key) {
    advance(epoch);
    if (epoch != epoch_ || !read_ || !doc_.root().is_object()) return {};
    return doc_.root().find(key);
  }
  // A checkpoint's entry, handed over once: parsed into `doc`.
  JsonValue checkpoint(std::uint64_t epoch, const std::string& key, JsonDoc& doc, std::string& text) {
    advance(epoch);
    const auto it = checkpoints_.find({epoch, key});
    if (it == checkpoints_.end()) return {};
    text = std::move(it->second);
    checkpoints_.erase(it);
    doc.parse(text);
    return doc.root();
  }

 private:
  static std::optional<std::uint64_t> epoch_of(std::string_view key) {
    std::uint64_t epoch = 0;
    // Only the keys fmt would write for an epoch: digits without a leading zero.
    if (key.empty() || (key[0] == '0' && key.size() > 1) || key.find_first_not_of("0123456789") != std::string_view::npos ||
        std::from_chars(key.data(), key.data() + key.size(), epoch).ec != std::errc() || epoch > 100'000'000)
      return std::nullopt;
    return epoch;
  }

  void advance(std::uint64_t epoch) {
    try {
      while (!done_ && (!read_ || epoch_ < epoch)) {
        if (!stream_.next(&key_)) {
          done_ = true;
          break;
        }
        text_.clear();
        stream_.value(&text_);
        const auto e = epoch_of(key_);
        if (!e || (read_ && *e < epoch_)) continue;  // out of order: its entries are absent
        doc_.parse(text_);  // a repeated key: the last one, as a JSON object keeps it
        epoch_ = *e;
        read_ = true;
        if (!doc_.root().is_object()) continue;
        doc_.root().members([&](std::string_view k, const JsonValue& v) {
          if (k.starts_with("save_ckpt") || k.starts_with("load_ckpt")) checkpoints_[{epoch_, std::string(k)}] = std::string(v.raw());
        });
      }
    } catch (const JsonError&) {
      done_ = true;
      read_ = false;
    }
  }

  JsonStream stream_;
  bool done_ = false, read_ = false;
  std::uint64_t epoch_ = 0;
  std::string key_, text_;
  JsonDoc doc_;
  std::map<std::pair<std::uint64_t, std::string>, std::string> checkpoints_;

 public:
  EpochStats(const EpochStats&) = delete;
  EpochStats& operator=(const EpochStats&) = delete;
};

JsonValue member(const JsonValue& entry, std::string_view key) {
  return entry.valid() && entry.is_object() ? entry.find(key) : JsonValue();
}

// DLIO writes an epoch's, block's and evaluation's durations as text with two decimals.
std::string duration_text(const std::string& start, const std::string& end) {
  const auto d = iso_span(start, end);
  return d ? fmt::format("{:.2f}", *d) : std::string("?");
}

// One span of <rank>_per_epoch_stats.json: start and end as the records give them, its duration
// their difference.
void check_span(const std::string& name, const JsonValue& entry, const std::string& start, const std::string& end, Checks& checks) {
  checks.text(name + ".start", member(entry, "start"), start);
  checks.text(name + ".end", member(entry, "end"), end);
  checks.text(name + ".duration", member(entry, "duration"), duration_text(start, end));
}

class RankReader {
 public:
  // `shared`: held while this reader adds to `totals` and `checks`, which other ranks' readers share.
  RankReader(const std::string& folder, int rank, int ranks, double checkpoint_gib, RunTotals& totals, Checks& checks,
             AsyncChecks* async, std::mutex& shared)
      : folder_(folder), rank_(rank), ranks_(ranks), checkpoint_gib_(checkpoint_gib), totals_(totals), checks_(checks),
        async_(async), shared_(shared), records_(util::join(folder, fmt::format("{}_records.jsonl", rank))),
        stats_(util::join(folder, fmt::format("{}_per_epoch_stats.json", rank))) {
    v_.rank = [&](const RankLine& r) {
      const std::lock_guard lock(shared_);
      on_rank(r);
    };
    v_.phase = [&](const PhaseLine& p) { on_phase(p); };
    v_.checkpoint = [&](const CheckpointLine& c) {
      const std::lock_guard lock(shared_);
      on_checkpoint(c);
    };
    v_.generate = [&](const GenerateLine& g) {
      const std::lock_guard lock(shared_);
      totals_.generate.ran = true;
      totals_.generate.seconds = std::max(totals_.generate.seconds, g.seconds);
      totals_.generate.durable_seconds = std::max(totals_.generate.durable_seconds, g.durable_seconds);
      totals_.generate.files_written += g.files_written;
      totals_.generate.files_kept += g.files_kept;
      totals_.generate.io.merge(g.io);
    };
    v_.end = [&](const EndLine& e) {
      const std::lock_guard lock(shared_);
      if (!e.complete) ++totals_.incomplete_ranks;
      on_start(e);
    };
    v_.failover = [&](const FailoverLine& f) {
      const std::lock_guard lock(shared_);
      totals_.startup.failover = f;
    };
    v_.staging = [&](const StagingLine& st) {
      const std::lock_guard lock(shared_);
      totals_.staging_seconds = std::max(totals_.staging_seconds, st.seconds);
      totals_.staging.merge(st.tier);
      totals_.staging_io.merge(st.io);
    };
    v_.async = [&](const std::string& kind, const JsonValue& line) {
      if (async_ == nullptr) return;
      // An overlap's steps are those of its epoch's lists, read with the epoch's phase line.
      JsonValue steps;
      if (kind == "async_overlap" && steps_) {
        const JsonValue epoch = line.find("epoch");
        if (epoch.valid() && epoch.is_unsigned()) steps = steps_->member(epoch.u64());
      }
      const std::lock_guard lock(shared_);
      async_->line(rank_, kind, line, steps);
    };
  }

  // Hands over the lines up to the first phase line of an epoch after `epoch` (all lines before
  // the first phase line when `epoch` is none).
  void read(std::optional<std::uint64_t> epoch) {
    while (records_.peek() && !(records_.kind() == "phase" && (!epoch || records_.epoch() > *epoch))) records_.hand_over(v_);
  }
  // The epoch of the next phase line; none when no phase line is left.
  std::optional<std::uint64_t> next_epoch() {
    if (records_.peek() && records_.kind() == "phase") return records_.epoch();
    return std::nullopt;
  }

 private:
  std::string tag() const { return fmt::format("rank {}", rank_); }

  // The rank's process start, and from it to its first read of checkpoint data.
  void on_start(const EndLine& e) {
    StartupTotals& s = totals_.startup;
    if (!e.process_start_ns) return;
    ++s.ranks_known;
    if (s.first_process_start.empty() || iso_span(e.process_start, s.first_process_start).value_or(0) > 0)
      s.first_process_start = e.process_start;
    if (first_read_end_ns_ == 0) return;
    ++s.ranks_loaded;
    const double seconds = static_cast<double>(first_read_end_ns_ - *e.process_start_ns) * 1e-9;
    if (s.first_read_slowest_rank < 0 || seconds > s.first_read_max ||
        (seconds == s.first_read_max && rank_ < s.first_read_slowest_rank)) {
      s.first_read_max = seconds;
      s.first_read_slowest_rank = rank_;
    }
    s.first_read_min = std::min(s.first_read_min, seconds);
  }

  JsonValue stats_at(std::uint64_t epoch, std::string_view key) { return stats_.at(epoch, key); }

  void on_rank(const RankLine& r) {
    if (r.rank != rank_ || r.ranks != ranks_)
      throw data_error(fmt::format("the records of rank {} say they are rank {} of {}, the run had {} ranks", rank_, r.rank,
                                   r.ranks, ranks_));
    header_ = r;
    if (totals_.hostnames.size() <= static_cast<std::size_t>(r.host_index)) totals_.hostnames.resize(r.host_index + 1);
    totals_.hostnames[static_cast<std::size_t>(r.host_index)] = r.hostname;
  }

  void on_phase(const PhaseLine& p) {
    if (!steps_)
      steps_.emplace(util::join(folder_, fmt::format("{}_output.json", rank_)), header_.exclude_start, header_.exclude_end);
    const StepLists& lists = steps_->epoch(p.epoch);
    const std::lock_guard lock(shared_);
    if (async_ != nullptr) async_->phase(rank_, p);
    const auto it = lists.find({p.epoch, p.kind});
    const StepPhase none;
    PhaseTotals& totals = totals_.phases[{p.epoch, p.kind}];
    totals.kind = p.kind;
    totals.epoch = p.epoch;
    if (totals.ranks.empty()) totals.ranks.reserve(static_cast<std::size_t>(ranks_));  // kept to the end: no slack
    totals.add(header_, p, it == lists.end() ? none : it->second);
    RankPhase& mine = totals.ranks.back();
    const StepPhase& steps = it == lists.end() ? none : it->second;
    // DLIO's per-rank file: each block's AU (percent) and throughput.
    const std::string name = fmt::format("{} {}_output.json epoch {} ", tag(), rank_, p.epoch);
    for (std::size_t b = 0; b < mine.blocks.size(); ++b) {
      const std::string block = p.kind == "eval" ? "eval" : fmt::format("block{}", b + 1);
      const StepBlock& reported = steps.blocks[b];
      const json au = reported.reported_au ? json(*reported.reported_au) : json(nullptr);
      const json throughput = reported.reported_throughput ? json(*reported.reported_throughput) : json(nullptr);
      const auto scaled = mine.blocks[b].au ? std::optional<double>(*mine.blocks[b].au * 100) : std::nullopt;
      checks_.number(name + "au." + block, reported.reported ? &au : nullptr, scaled, kRounding);
      checks_.number(name + "throughput." + block, reported.reported ? &throughput : nullptr, mine.blocks[b].throughput_dlio,
                     kRounding);
    }
    // The blocks' figures are checked: only the phase's are kept, for every rank to the end.
    std::vector<Window>().swap(mine.blocks);
    // Its per_epoch_stats: the spans the records give.
    const std::string stats = fmt::format("{} {}_per_epoch_stats.json epoch {} ", tag(), rank_, p.epoch);
    if (p.kind == "eval") {
      check_span(stats + "eval", stats_at(p.epoch, "eval"), p.start, p.end, checks_);
    } else {
      for (std::size_t b = 0; b < p.blocks.size(); ++b) {
        const std::string key = fmt::format("block{}", b + 1);
        check_span(stats + key, stats_at(p.epoch, key), p.blocks[b].start, p.blocks[b].end, checks_);
      }
      checks_.text(stats + "start", stats_at(p.epoch, "start"), p.start);
      checks_.text(stats + "duration", stats_at(p.epoch, "duration"), duration_text(p.start, p.end));
    }
    // The two clocks agree: the wall-clock span is the monotonic one, to the microseconds it is written in.
    const auto wall = iso_span(p.start, p.end);
    const json wall_value = wall ? json(*wall) : json(nullptr);
    checks_.number(fmt::format("{} records epoch {} {} wall-clock span", tag(), p.epoch, p.kind), &wall_value,
                   static_cast<double>(p.end_ns - p.start_ns) * 1e-9, {0, 3e-6});
  }

  void on_checkpoint(const CheckpointLine& c) {
    totals_.checkpoints[{c.kind, c.index}].add(c, rank_);
    if (async_ != nullptr) async_->checkpoint(rank_, c);
    if (c.kind == "load" && c.first_read_end_ns != 0 && first_read_end_ns_ == 0) first_read_end_ns_ = c.first_read_end_ns;
    const std::string key = fmt::format("{}_ckpt{}", c.kind, c.block);
    const std::uint64_t epoch = c.epoch == 0 ? 1 : c.epoch;
    const JsonValue entry = stats_.checkpoint(epoch, key, entry_doc_, entry_text_);
    const std::string name = fmt::format("{} {}_per_epoch_stats.json epoch {} {}", tag(), rank_, epoch, key);
    checks_.text(name + ".start", member(entry, "start"), c.start);
    checks_.text(name + ".end", member(entry, "end"), c.end);
    checks_.number(name + ".duration", member(entry, "duration"), c.seconds, kExact);
    checks_.number(name + ".throughput", member(entry, "throughput"),
                   c.seconds > 0 ? checkpoint_gib_ / c.seconds : 0.0, kRounding);
    // DLIO's duration is end - start.
    const auto wall = iso_span(c.start, c.end);
    const json wall_value = wall ? json(*wall) : json(nullptr);
    checks_.number(name + " end - start", &wall_value, c.seconds, {0, 3e-6});
  }

  std::string folder_;
  int rank_, ranks_;
  double checkpoint_gib_;
  RunTotals& totals_;
  Checks& checks_;
  AsyncChecks* async_;
  std::mutex& shared_;
  std::int64_t first_read_end_ns_ = 0;  // of this rank's first load
  RankLine header_;
  RecordVisitor v_;
  RecordsReader records_;
  std::optional<StepListsReader> steps_;
  EpochStats stats_;
  JsonDoc entry_doc_;  // a checkpoint's entry of the stats
  std::string entry_text_;
};

}  // namespace

void CheckpointTotals::add(const CheckpointLine& c, int rank) {
  kind = c.kind;
  index = c.index;
  epoch = c.epoch;
  step = c.step;
  folder = c.folder;
  ++ranks;
  duration = std::max(duration, c.seconds);
  collective = std::max(collective, c.collective_seconds);
  // Ranks are read in any order: a tie goes to the lowest rank, as the summariser gives it.
  if (slowest_rank < 0 || c.io_seconds > slowest_rank_seconds || (c.io_seconds == slowest_rank_seconds && rank < slowest_rank)) {
    slowest_rank = rank;
    slowest_rank_seconds = c.io_seconds;
    slowest_rank_file_bytes = c.file_bytes;
  }
  if (c.file_bytes > 0) {
    ++ranks_with_data;
    fastest = std::min(fastest, c.io_seconds);
    const double mine = c.io_seconds > 0 ? static_cast<double>(c.file_bytes) / c.io_seconds : 0;
    rank_bandwidth_min = std::min(rank_bandwidth_min, mine);
    rank_bandwidth_max = std::max(rank_bandwidth_max, mine);
  }
  files += c.files;
  tensor_bytes += c.tensor_bytes;
  file_bytes += c.file_bytes;
  if (c.process_read_before && c.process_read_after) {
    storage_read_bytes += *c.process_read_after - *c.process_read_before;
    ++read_known;
  }
  io.merge(c.io);
}

void read_ranks(const std::string& folder, int ranks, double checkpoint_gib, RunTotals& totals, Checks& checks,
                AsyncChecks* async, const std::function<void(RunTotals&)>& on_epoch) {
  totals.ranks = ranks;
  // Every rank's files are open together and read epoch by epoch: one epoch of every rank in
  // memory at a time. The ranks of an epoch are read in parallel (their parsing is what costs);
  // what each adds to the totals is added under one lock. A streaming --all prints in one order:
  // one thread then.
  // Three files a rank, plus the process's own (standard streams, summary, CSVs, libraries).
  util::ensure_open_files(3 * static_cast<std::uint64_t>(ranks) + 64,
                          fmt::format("verifying a run of {} ranks (three files open a rank)", ranks));
  std::mutex shared;
  std::vector<std::unique_ptr<RankReader>> readers;
  readers.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    readers.push_back(std::make_unique<RankReader>(folder, r, ranks, checkpoint_gib, totals, checks, async, shared));
  const int threads = checks.on_check ? 1 : std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, std::min(ranks, 16));
  std::optional<std::uint64_t> epoch;  // none: the lines before the first phase
  bool stop = false;
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(threads) + 1);
  // Between two epochs (one thread, the others waiting): the epoch's phases checked and dropped,
  // and the next epoch chosen, the lowest any rank's next phase line has.
  auto between = [&]() noexcept {
    try {
      for (const auto& failure : failures)
        if (failure) return void(stop = true);
      if (epoch) {
        for (auto& [key, phase] : totals.phases)
          std::sort(phase.ranks.begin(), phase.ranks.end(), [](const RankPhase& a, const RankPhase& b) { return a.rank < b.rank; });
        on_epoch(totals);
        totals.phases.clear();
      }
      std::optional<std::uint64_t> next;
      for (auto& reader : readers)
        if (const auto e = reader->next_epoch(); e && (!next || *e < *next)) next = e;
      // None: every rank's lines are read to their end.
      if (next) epoch = next;
      else stop = true;
    } catch (...) {
      failures.back() = std::current_exception();
      stop = true;
    }
  };
  std::barrier sync(threads, between);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      while (true) {
        try {
          for (int r = t; r < ranks; r += threads) readers[static_cast<std::size_t>(r)]->read(epoch);
        } catch (...) {
          failures[static_cast<std::size_t>(t)] = std::current_exception();
        }
        sync.arrive_and_wait();
        if (stop) break;
      }
    });
  for (auto& thread : pool) thread.join();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

}  // namespace trainio::verify
