// Reading every rank's evidence, and checking each rank's own files against it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <mutex>
#include <thread>

#include "util/error.hpp"
#include "util/paths.hpp"
#include "verify/run_totals.hpp"
#include "verify/step_lists.hpp"

namespace trainio::verify {

// Seconds since the epoch of an ISO 8601 local time with microseconds, read as if it were UTC:
// differences between two such times are exact (to the microsecond) outside a clock change.
namespace {

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// The records' own shape, YYYY-MM-DDTHH:MM:SS.ffffff, read without sscanf and timegm (verify
// reads two per span, millions in a long run); nullopt for any other text.
std::optional<double> fixed_iso_seconds(const std::string& t) {
  if (t.size() != 26 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' || t[19] != '.')
    return std::nullopt;
  int v[7] = {};
  const int at[7][2] = {{0, 4}, {5, 2}, {8, 2}, {11, 2}, {14, 2}, {17, 2}, {20, 6}};
  for (int i = 0; i < 7; ++i)
    for (int k = 0; k < at[i][1]; ++k) {
      const char c = t[static_cast<std::size_t>(at[i][0] + k)];
      if (c < '0' || c > '9') return std::nullopt;
      v[i] = v[i] * 10 + (c - '0');
    }
  if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 || v[5] > 60) return std::nullopt;
  const std::int64_t days = days_from_civil(v[0], static_cast<unsigned>(v[1]), static_cast<unsigned>(v[2]));
  return static_cast<double>(days * 86400 + v[3] * 3600 + v[4] * 60 + v[5]) + v[6] * 1e-6;
}

}  // namespace

std::optional<double> iso_seconds(const std::string& text) {
  if (const auto fixed = fixed_iso_seconds(text)) return fixed;
  std::tm tm{};
  int micros = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%6d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &micros) != 7)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + micros * 1e-6;
}

std::optional<double> iso_span(const std::string& start, const std::string& end) {
  const auto a = iso_seconds(start), b = iso_seconds(end);
  if (!a || !b) return std::nullopt;
  return *b - *a;
}

namespace {

using json = nlohmann::json;

// A rank's <rank>_per_epoch_stats.json, its entries by epoch (none when the file is missing or
// not JSON: each of its figures is then reported absent).
class EpochStats {
 public:
  explicit EpochStats(const std::string& path) {  // values point into doc_: never copied or moved
    if (!read_text_file(path, text_)) return;
    try {
      doc_.parse(text_);
    } catch (const JsonError&) {
      return;
    }
    if (!doc_.root().is_object()) return;
    doc_.root().members([&](std::string_view key, const JsonValue& v) {
      std::uint64_t epoch = 0;
      // Only the keys fmt would write for an epoch: digits without a leading zero.
      if (key.empty() || (key[0] == '0' && key.size() > 1) || key.find_first_not_of("0123456789") != std::string_view::npos ||
          std::from_chars(key.data(), key.data() + key.size(), epoch).ec != std::errc() || epoch > 100'000'000)
        return;
      if (by_epoch_.size() <= epoch) by_epoch_.resize(epoch + 1);
      by_epoch_[epoch] = v;  // a repeated key: the last one, as a JSON object keeps it
    });
  }
  // The entry `key` of `epoch`; invalid when absent.
  JsonValue at(std::uint64_t epoch, std::string_view key) const {
    if (epoch >= by_epoch_.size() || !by_epoch_[epoch].valid() || !by_epoch_[epoch].is_object()) return {};
    return by_epoch_[epoch].find(key);
  }

 private:
  std::string text_;
  JsonDoc doc_;
  std::vector<JsonValue> by_epoch_;

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
             std::mutex& shared)
      : folder_(folder), rank_(rank), ranks_(ranks), checkpoint_gib_(checkpoint_gib), totals_(totals), checks_(checks),
        shared_(shared), stats_(util::join(folder, fmt::format("{}_per_epoch_stats.json", rank))) {}

  void read() {
    RecordVisitor v;
    v.rank = [&](const RankLine& r) {
      const std::lock_guard lock(shared_);
      on_rank(r);
    };
    v.phase = [&](const PhaseLine& p) { on_phase(p); };
    v.checkpoint = [&](const CheckpointLine& c) {
      const std::lock_guard lock(shared_);
      on_checkpoint(c);
    };
    v.generate = [&](const GenerateLine& g) {
      const std::lock_guard lock(shared_);
      totals_.generate.ran = true;
      totals_.generate.seconds = std::max(totals_.generate.seconds, g.seconds);
      totals_.generate.durable_seconds = std::max(totals_.generate.durable_seconds, g.durable_seconds);
      totals_.generate.files_written += g.files_written;
      totals_.generate.files_kept += g.files_kept;
      totals_.generate.io.merge(g.io);
    };
    v.end = [&](const EndLine& e) {
      const std::lock_guard lock(shared_);
      if (!e.complete) ++totals_.incomplete_ranks;
      on_start(e);
    };
    v.failover = [&](const FailoverLine& f) {
      const std::lock_guard lock(shared_);
      totals_.startup.failover = f;
    };
    v.staging = [&](const StagingLine& s) {
      const std::lock_guard lock(shared_);
      totals_.staging_seconds = std::max(totals_.staging_seconds, s.seconds);
      totals_.staging.merge(s.tier);
      totals_.staging_io.merge(s.io);
    };
    read_records(util::join(folder_, fmt::format("{}_records.jsonl", rank_)), v);
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

  JsonValue stats_at(std::uint64_t epoch, std::string_view key) const { return stats_.at(epoch, key); }

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
      steps_ = read_step_lists(util::join(folder_, fmt::format("{}_output.json", rank_)), header_.exclude_start, header_.exclude_end);
    const std::lock_guard lock(shared_);
    const auto it = steps_->find({p.epoch, p.kind});
    const StepPhase none;
    PhaseTotals& totals = totals_.phases[{p.epoch, p.kind}];
    totals.kind = p.kind;
    totals.epoch = p.epoch;
    if (totals.ranks.empty()) totals.ranks.reserve(static_cast<std::size_t>(ranks_));  // kept to the end: no slack
    totals.add(header_, p, it == steps_->end() ? none : it->second);
    RankPhase& mine = totals.ranks.back();
    const StepPhase& steps = it == steps_->end() ? none : it->second;
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
    if (c.kind == "load" && c.first_read_end_ns != 0 && first_read_end_ns_ == 0) first_read_end_ns_ = c.first_read_end_ns;
    const std::string key = fmt::format("{}_ckpt{}", c.kind, c.block);
    const std::uint64_t epoch = c.epoch == 0 ? 1 : c.epoch;
    const JsonValue entry = stats_at(epoch, key);
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
  std::mutex& shared_;
  std::int64_t first_read_end_ns_ = 0;  // of this rank's first load
  RankLine header_;
  std::optional<StepLists> steps_;
  EpochStats stats_;
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

void read_ranks(const std::string& folder, int ranks, double checkpoint_gib, RunTotals& totals, Checks& checks) {
  totals.ranks = ranks;
  // The ranks' files are read in parallel (their parsing is what costs); what each adds to the
  // totals is added under one lock. A streaming --all prints in one order: one thread then.
  std::mutex shared;
  const int threads = checks.on_check ? 1 : std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, std::min(ranks, 16));
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (int r = t; r < ranks; r += threads) RankReader(folder, r, ranks, checkpoint_gib, totals, checks, shared).read();
      } catch (...) {
        failures[static_cast<std::size_t>(t)] = std::current_exception();
      }
    });
  for (auto& thread : pool) thread.join();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
  // Ranks in order, whatever order their readers finished in: ties between ranks go to the lowest.
  for (auto& [key, phase] : totals.phases)
    std::sort(phase.ranks.begin(), phase.ranks.end(), [](const RankPhase& a, const RankPhase& b) { return a.rank < b.rank; });
}

}  // namespace trainio::verify
