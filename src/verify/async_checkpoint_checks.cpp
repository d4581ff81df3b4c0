#include "verify/async_checkpoint_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "util/error.hpp"
#include "util/paths.hpp"
#include "verify/records.hpp"

namespace trainio::verify {

namespace {

using json = nlohmann::json;  // for values recomputed from the records, compared as reported ones

// One save across ranks, from the records.
struct SaveTotals {
  int ranks = 0;
  double stall = 0, slot_wait = 0, snapshot = 0;  // the largest of each
  double flush = 0;                               // the largest `seconds` of the save's checkpoint lines
  std::uint64_t buffer_bytes = 0, file_bytes = 0;
};

// Steps on one side of the flush, across ranks.
struct SideTotals {
  std::uint64_t steps = 0, sample_bytes = 0;
  int ranks = 0;
  double au_sum = 0, rate_sum = 0;  // of each rank with such steps: its AU (percent) and bytes / time
};

struct EpochTotals {
  SideTotals during, without;
};

// One rank's training steps of an epoch, in order: (load, compute, barrier) as the lists give them.
using StepTriples = std::vector<std::array<float, 3>>;

StepTriples train_steps(const JsonValue& epoch) {
  StepTriples steps;
  if (!epoch.valid() || !epoch.is_object()) return steps;
  const char* fields[] = {"load", "compute", "barrier"};
  for (std::size_t f = 0; f < 3; ++f) {
    const JsonValue lists = epoch.at(fields[f]);
    std::size_t i = 0;
    for (int b = 1;; ++b) {
      const JsonValue list = lists.find(fmt::format("block{}", b));
      if (!list.valid()) break;
      for (const JsonValue v : list) {
        if (steps.size() <= i) steps.resize(i + 1);
        steps[i++][f] = static_cast<float>(v.f64());
      }
    }
  }
  return steps;
}

struct PhaseSpan {
  std::uint64_t first = 0, steps = 0, sample_bytes = 0;
};

void add_side(SideTotals& t, std::uint64_t steps, std::uint64_t bytes, double compute, double time) {
  t.steps += steps;
  t.sample_bytes += bytes;
  if (steps == 0 || time <= 0) return;
  ++t.ranks;
  t.au_sum += 100.0 * compute / time;
  t.rate_sum += static_cast<double>(bytes) / time;
}

// What a rank's async lines hold, copied out of the records as they are read.
struct AsyncSaveLine {
  std::uint64_t index = 0, buffer_bytes = 0;
  std::int64_t slot_wait_ns = 0, snapshot_ns = 0, flush_start_ns = 0, flush_end_ns = 0;
};
struct OverlapLine {
  std::uint64_t epoch = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  std::uint64_t steps[2] = {0, 0}, sample_bytes[2] = {0, 0};
  double compute[2] = {0, 0}, time[2] = {0, 0};
};

// A rank's lines not yet matched: its latest training phase, and its saves' flushes by index.
struct RankState {
  std::uint64_t epoch = 0;
  PhaseSpan phase;
  bool has_phase = false;
  std::map<std::uint64_t, std::pair<double, std::uint64_t>> flushes;  // save index -> (seconds, file bytes)
};

void save_line(const std::string& tag, RankState& rank, const AsyncSaveLine& a, std::map<std::uint64_t, SaveTotals>& saves,
               Checks& checks) {
  const auto flush = rank.flushes.find(a.index);
  if (flush == rank.flushes.end()) {
    checks.problem(fmt::format("{} async_save {}", tag, a.index), "no checkpoint line of that save");
    return;
  }
  const json seconds = flush->second.first;
  checks.number(fmt::format("{} save {} seconds (flush_end_ns - flush_start_ns)", tag, a.index), &seconds,
                static_cast<double>(a.flush_end_ns - a.flush_start_ns) * 1e-9, kRounding);
  SaveTotals& t = saves[a.index];
  ++t.ranks;
  t.stall = std::max(t.stall, static_cast<double>(a.slot_wait_ns + a.snapshot_ns) * 1e-9);
  t.slot_wait = std::max(t.slot_wait, static_cast<double>(a.slot_wait_ns) * 1e-9);
  t.snapshot = std::max(t.snapshot, static_cast<double>(a.snapshot_ns) * 1e-9);
  t.buffer_bytes = std::max(t.buffer_bytes, a.buffer_bytes);
  t.flush = std::max(t.flush, flush->second.first);
  t.file_bytes += flush->second.second;
  rank.flushes.erase(flush);
}

void overlap_line(const std::string& tag, const RankState& rank, const OverlapLine& o, const JsonValue& member,
                  std::map<std::uint64_t, EpochTotals>& epochs, Checks& checks) {
  const std::string name = fmt::format("{} epoch {} async_overlap", tag, o.epoch);
  if (!rank.has_phase || rank.epoch != o.epoch) {
    checks.problem(name, "no train phase line for that epoch");
    return;
  }
  const StepTriples list = train_steps(member);
  const PhaseSpan& span = rank.phase;
  // Each step of the phase on its side, as the ranges say, summed in step order as the run did.
  std::vector<bool> during(span.steps, false);
  for (const auto& [first, end] : o.ranges) {
    if (first < span.first || end > span.first + span.steps || first >= end) {
      checks.problem(name, fmt::format("step range [{}, {}) is not within the phase's [{}, {})", first, end, span.first,
                                       span.first + span.steps));
      continue;
    }
    for (auto i = first; i < end; ++i) during[i - span.first] = true;
  }
  if (list.size() != span.steps) {
    checks.problem(name, fmt::format("the step lists hold {} steps, the phase {}", list.size(), span.steps));
    return;
  }
  double compute[2] = {0, 0}, time[2] = {0, 0};
  std::uint64_t count[2] = {0, 0};
  for (std::size_t i = 0; i < list.size(); ++i) {
    const int side = during[i] ? 0 : 1;
    ++count[side];
    compute[side] += static_cast<double>(list[i][1]);
    time[side] += static_cast<double>(list[i][0]) + static_cast<double>(list[i][1]) + static_cast<double>(list[i][2]);
  }
  const char* keys[] = {"during_flush", "without_flush"};
  for (int side = 0; side < 2; ++side) {
    const std::string n = fmt::format("{} {}", name, keys[side]);
    const json reported_steps = o.steps[side], reported_compute = o.compute[side], reported_time = o.time[side];
    checks.number(n + ".steps", &reported_steps, static_cast<double>(count[side]), kExact);
    checks.number(n + ".compute", &reported_compute, compute[side], kRounding);
    checks.number(n + ".time", &reported_time, time[side], kRounding);
  }
  const json phase_bytes = span.sample_bytes;
  checks.number(name + " sample_bytes during + without = the phase's", &phase_bytes,
                static_cast<double>(o.sample_bytes[0] + o.sample_bytes[1]), kExact);
  EpochTotals& e = epochs[o.epoch];
  add_side(e.during, count[0], o.sample_bytes[0], compute[0], time[0]);
  add_side(e.without, count[1], o.sample_bytes[1], compute[1], time[1]);
}

void check_side(const std::string& name, const JsonValue& reported, const SideTotals& t, Checks& checks) {
  auto at = [&](const char* key) { return reported.valid() ? reported.find(key) : JsonValue(); };
  checks.number(name + ".steps", at("steps"), static_cast<double>(t.steps), kExact);
  checks.number(name + ".ranks", at("ranks"), t.ranks, kExact);
  checks.number(name + ".sample_bytes", at("sample_bytes"), static_cast<double>(t.sample_bytes), kExact);
  checks.number(name + ".au_percentage", at("au_percentage"), t.ranks > 0 ? std::optional(t.au_sum / t.ranks) : std::nullopt,
                kRounding, true);
  checks.number(name + ".read_bytes_per_second", at("read_bytes_per_second"),
                t.ranks > 0 ? std::optional(t.rate_sum) : std::nullopt, kRounding, true);
}

}  // namespace

struct AsyncChecks::State {
  std::vector<RankState> ranks;
  std::map<std::uint64_t, SaveTotals> saves;
  std::map<std::uint64_t, EpochTotals> epochs;  // those whose overlap is not yet checked
};

AsyncChecks::AsyncChecks(int ranks, Checks& checks) : state_(std::make_unique<State>()), ranks_(ranks), checks_(checks) {
  state_->ranks.resize(static_cast<std::size_t>(ranks));
}

AsyncChecks::~AsyncChecks() = default;

bool AsyncChecks::wanted(const JsonValue& summary) {
  const JsonValue totals = find(summary, "trainio/checkpoint/async");
  return totals.valid() && !totals.is_null();
}

void AsyncChecks::phase(int rank, const PhaseLine& p) {
  if (p.kind != "train") return;
  RankState& r = state_->ranks[static_cast<std::size_t>(rank)];
  r.epoch = p.epoch;
  r.phase = {p.first_step, p.steps, p.sample_bytes};
  r.has_phase = true;
}

void AsyncChecks::checkpoint(int rank, const CheckpointLine& c) {
  if (c.kind == "save") state_->ranks[static_cast<std::size_t>(rank)].flushes[c.index] = {c.seconds, c.file_bytes};
}

void AsyncChecks::line(int rank, const std::string& kind, const JsonValue& line, const JsonValue& steps) {
  const std::string tag = fmt::format("rank {} records", rank);
  RankState& r = state_->ranks[static_cast<std::size_t>(rank)];
  if (kind == "async_save") {
    const AsyncSaveLine a{line.at("index").u64(), line.at("buffer_bytes").u64(), line.at("slot_wait_ns").i64(),
                          line.at("snapshot_ns").i64(), line.at("flush_start_ns").i64(), line.at("flush_end_ns").i64()};
    save_line(tag, r, a, state_->saves, checks_);
    return;
  }
  if (!line.at("kind").equals("train")) return;
  OverlapLine o;
  o.epoch = line.at("epoch").u64();
  for (const JsonValue x : line.at("steps")) o.ranges.emplace_back(x.at(std::size_t{0}).u64(), x.at(std::size_t{1}).u64());
  const char* keys[] = {"during_flush", "without_flush"};
  for (int side = 0; side < 2; ++side) {
    const JsonValue sums = line.at(keys[side]);
    o.steps[side] = sums.at("steps").u64();
    o.sample_bytes[side] = sums.at("sample_bytes").u64();
    o.compute[side] = sums.at("compute").f64();
    o.time[side] = sums.at("time").f64();
  }
  overlap_line(tag, r, o, steps, state_->epochs, checks_);
}

void AsyncChecks::epoch(std::uint64_t epoch, const JsonValue& e) {
  // Each epoch: its training steps with and without a flush running.
  const std::string name = fmt::format("trainio.epochs epoch {} flush_overlap", epoch);
  const JsonValue reported = e.valid() && e.is_object() ? e.find("flush_overlap") : JsonValue();
  const auto it = state_->epochs.find(epoch);
  if (it == state_->epochs.end()) {
    if (reported.valid()) checks_.problem(name, "no rank's records have its async_overlap line");
    return;
  }
  check_side(name + ".during_flush", reported.valid() ? reported.find("during_flush") : JsonValue(), it->second.during, checks_);
  check_side(name + ".without_flush", reported.valid() ? reported.find("without_flush") : JsonValue(), it->second.without,
             checks_);
  const SideTotals &d = it->second.during, &o = it->second.without;
  const std::optional<double> ratio =
      d.ranks > 0 && o.ranks > 0 && o.rate_sum > 0 ? std::optional(d.rate_sum / o.rate_sum) : std::nullopt;
  checks_.number(name + ".read_ratio", reported.valid() ? reported.find("read_ratio") : JsonValue(), ratio, kRounding);
  state_->epochs.erase(it);
}

void AsyncChecks::finish(const JsonValue& summary) {
  const JsonValue totals = find(summary, "trainio/checkpoint/async");
  const int ranks = ranks_;
  Checks& checks = checks_;
  const auto& saves = state_->saves;
  // Each save: its stall and flush.
  std::uint64_t reported_saves = 0;
  double stall_sum = 0, stall_max = 0;
  if (const JsonValue list = find(summary, "trainio/checkpoint/checkpoints"); list.valid() && list.is_array())
    for (const JsonValue c : list) {
      const JsonValue a = c.find("async");
      if (!c.at("kind").equals("save") || !a.valid()) continue;
      ++reported_saves;
      const auto index = c.at("index").u64();
      const std::string name = fmt::format("trainio.checkpoint.checkpoints save {} async", index);
      const auto it = saves.find(index);
      if (it == saves.end() || it->second.ranks != ranks) {
        checks.problem(name, fmt::format("{} of {} ranks have its async_save record", it == saves.end() ? 0 : it->second.ranks, ranks));
        continue;
      }
      const SaveTotals& t = it->second;
      checks.number(name + ".stall_seconds", a.find("stall_seconds"), t.stall, kRounding, true);
      checks.number(name + ".slot_wait_seconds", a.find("slot_wait_seconds"), t.slot_wait, kRounding);
      checks.number(name + ".snapshot_seconds", a.find("snapshot_seconds"), t.snapshot, kRounding);
      checks.number(name + ".flush_seconds", a.find("flush_seconds"), t.flush, kRounding);
      checks.number(name + ".flush_bytes_per_second", a.find("flush_bytes_per_second"),
                    t.flush > 0 ? static_cast<double>(t.file_bytes) / t.flush : 0.0, kRounding);
      checks.number(name + ".buffer_bytes", a.find("buffer_bytes"), static_cast<double>(t.buffer_bytes), kExact);
      stall_sum += t.stall;
      stall_max = std::max(stall_max, t.stall);
    }
  if (reported_saves != saves.size())
    checks.problem("trainio.checkpoint.checkpoints async saves",
                   fmt::format("the summary lists {} asynchronous saves, the records {}", reported_saves, saves.size()));
  checks.number("trainio.checkpoint.async.saves", totals.find("saves"), static_cast<double>(saves.size()), kExact);
  checks.number("trainio.checkpoint.async.stall_seconds", totals.find("stall_seconds"), stall_sum, kRounding, true);
  checks.number("trainio.checkpoint.async.stall_seconds_max", totals.find("stall_seconds_max"), stall_max, kRounding);

}

}  // namespace trainio::verify
