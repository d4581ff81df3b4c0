#include "verify/async_checkpoint_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "util/error.hpp"
#include "util/paths.hpp"
#include "verify/records.hpp"

namespace trainio::verify {

namespace {

using json = nlohmann::json;

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

// One rank's training steps per epoch, in order: (load, compute, barrier) as the lists give them.
using StepTriples = std::map<std::uint64_t, std::vector<std::array<float, 3>>>;

StepTriples read_train_steps(const std::string& path) {
  std::ifstream in(path);
  const json doc = in ? json::parse(in, nullptr, false) : json();
  if (doc.is_discarded() || !doc.is_object())
    throw data_error(fmt::format("'{}' is missing or not DLIO's per-rank output", path),
                     "verify needs the step lists the run wrote beside its records");
  StepTriples out;
  for (const auto& [key, epoch] : doc.items()) {
    if (key.empty() || !std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    auto& steps = out[std::stoull(key)];
    const char* fields[] = {"load", "compute", "barrier"};
    for (int f = 0; f < 3; ++f) {
      const json& lists = epoch.at(fields[f]);
      std::size_t i = 0;
      for (int b = 1; lists.contains(fmt::format("block{}", b)); ++b)
        for (const auto& v : lists.at(fmt::format("block{}", b))) {
          if (steps.size() <= i) steps.resize(i + 1);
          steps[i++][static_cast<std::size_t>(f)] = static_cast<float>(v.get<double>());
        }
    }
  }
  return out;
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

// One rank: its records' async lines checked against its step lists, added to the run's totals.
void read_rank(const std::string& folder, int rank, std::map<std::uint64_t, SaveTotals>& saves,
               std::map<std::uint64_t, EpochTotals>& epochs, Checks& checks) {
  std::map<std::uint64_t, PhaseSpan> phases;
  std::map<std::uint64_t, std::pair<double, std::uint64_t>> flushes;  // save index -> (seconds, file bytes)
  std::vector<json> overlaps, async_saves;
  RecordVisitor v;
  v.phase = [&](const PhaseLine& p) {
    if (p.kind == "train") phases[p.epoch] = {p.first_step, p.steps, p.sample_bytes};
  };
  v.checkpoint = [&](const CheckpointLine& c) {
    if (c.kind == "save") flushes[c.index] = {c.seconds, c.file_bytes};
  };
  v.async = [&](const std::string& kind, const json& line) { (kind == "async_save" ? async_saves : overlaps).push_back(line); };
  read_records(util::join(folder, fmt::format("{}_records.jsonl", rank)), v);

  const std::string tag = fmt::format("rank {} records", rank);
  for (const json& a : async_saves) {
    const auto index = a.at("index").get<std::uint64_t>();
    const auto flush = flushes.find(index);
    if (flush == flushes.end()) {
      checks.problem(fmt::format("{} async_save {}", tag, index), "no checkpoint line of that save");
      continue;
    }
    const auto start = a.at("flush_start_ns").get<std::int64_t>(), end = a.at("flush_end_ns").get<std::int64_t>();
    const json seconds = flush->second.first;
    checks.number(fmt::format("{} save {} seconds (flush_end_ns - flush_start_ns)", tag, index), &seconds,
                  static_cast<double>(end - start) * 1e-9, kRounding);
    SaveTotals& t = saves[index];
    ++t.ranks;
    const auto slot = a.at("slot_wait_ns").get<std::int64_t>(), snap = a.at("snapshot_ns").get<std::int64_t>();
    t.stall = std::max(t.stall, static_cast<double>(slot + snap) * 1e-9);
    t.slot_wait = std::max(t.slot_wait, static_cast<double>(slot) * 1e-9);
    t.snapshot = std::max(t.snapshot, static_cast<double>(snap) * 1e-9);
    t.buffer_bytes = std::max(t.buffer_bytes, a.at("buffer_bytes").get<std::uint64_t>());
    t.flush = std::max(t.flush, flush->second.first);
    t.file_bytes += flush->second.second;
  }

  std::optional<StepTriples> steps;
  for (const json& o : overlaps) {
    if (o.at("kind").get<std::string>() != "train") continue;
    const auto epoch = o.at("epoch").get<std::uint64_t>();
    const std::string name = fmt::format("{} epoch {} async_overlap", tag, epoch);
    const auto phase = phases.find(epoch);
    if (phase == phases.end()) {
      checks.problem(name, "no train phase line for that epoch");
      continue;
    }
    if (!steps) steps = read_train_steps(util::join(folder, fmt::format("{}_output.json", rank)));
    const auto& list = (*steps)[epoch];
    const PhaseSpan& span = phase->second;
    // Each step of the phase on its side, as the ranges say, summed in step order as the run did.
    std::vector<bool> during(span.steps, false);
    for (const auto& r : o.at("steps")) {
      const auto first = r.at(0).get<std::uint64_t>(), end = r.at(1).get<std::uint64_t>();
      if (first < span.first || end > span.first + span.steps || first >= end) {
        checks.problem(name, fmt::format("step range [{}, {}) is not within the phase's [{}, {})", first, end, span.first,
                                         span.first + span.steps));
        continue;
      }
      for (auto i = first; i < end; ++i) during[i - span.first] = true;
    }
    if (list.size() != span.steps) {
      checks.problem(name, fmt::format("the step lists hold {} steps, the phase {}", list.size(), span.steps));
      continue;
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
    std::uint64_t bytes[2] = {0, 0};
    for (int side = 0; side < 2; ++side) {
      const json& sums = o.at(keys[side]);
      const std::string n = fmt::format("{} {}", name, keys[side]);
      checks.number(n + ".steps", &sums.at("steps"), static_cast<double>(count[side]), kExact);
      checks.number(n + ".compute", &sums.at("compute"), compute[side], kRounding);
      checks.number(n + ".time", &sums.at("time"), time[side], kRounding);
      bytes[side] = sums.at("sample_bytes").get<std::uint64_t>();
    }
    const json phase_bytes = span.sample_bytes;
    checks.number(name + " sample_bytes during + without = the phase's", &phase_bytes, static_cast<double>(bytes[0] + bytes[1]),
                  kExact);
    EpochTotals& e = epochs[epoch];
    add_side(e.during, count[0], bytes[0], compute[0], time[0]);
    add_side(e.without, count[1], bytes[1], compute[1], time[1]);
  }
}

void check_side(const std::string& name, const json* reported, const SideTotals& t, Checks& checks) {
  auto at = [&](const char* key) { return reported ? find(*reported, key) : nullptr; };
  checks.number(name + ".steps", at("steps"), static_cast<double>(t.steps), kExact);
  checks.number(name + ".ranks", at("ranks"), t.ranks, kExact);
  checks.number(name + ".sample_bytes", at("sample_bytes"), static_cast<double>(t.sample_bytes), kExact);
  checks.number(name + ".au_percentage", at("au_percentage"), t.ranks > 0 ? std::optional(t.au_sum / t.ranks) : std::nullopt,
                kRounding, true);
  checks.number(name + ".read_bytes_per_second", at("read_bytes_per_second"),
                t.ranks > 0 ? std::optional(t.rate_sum) : std::nullopt, kRounding, true);
}

}  // namespace

void check_async_checkpoints(const std::string& folder, const json& summary, int ranks, Checks& checks) {
  const json* totals = find(summary, "trainio/checkpoint/async");
  if (totals == nullptr || totals->is_null()) return;
  std::map<std::uint64_t, SaveTotals> saves;
  std::map<std::uint64_t, EpochTotals> epochs;
  for (int r = 0; r < ranks; ++r) read_rank(folder, r, saves, epochs, checks);

  // Each save: its stall and flush.
  std::uint64_t reported_saves = 0;
  double stall_sum = 0, stall_max = 0;
  if (const json* list = find(summary, "trainio/checkpoint/checkpoints"); list && list->is_array())
    for (const json& c : *list) {
      if (c.value("kind", "") != "save" || !c.contains("async")) continue;
      ++reported_saves;
      const auto index = c.at("index").get<std::uint64_t>();
      const std::string name = fmt::format("trainio.checkpoint.checkpoints save {} async", index);
      const auto it = saves.find(index);
      if (it == saves.end() || it->second.ranks != ranks) {
        checks.problem(name, fmt::format("{} of {} ranks have its async_save record", it == saves.end() ? 0 : it->second.ranks, ranks));
        continue;
      }
      const SaveTotals& t = it->second;
      const json& a = c.at("async");
      checks.number(name + ".stall_seconds", find(a, "stall_seconds"), t.stall, kRounding, true);
      checks.number(name + ".slot_wait_seconds", find(a, "slot_wait_seconds"), t.slot_wait, kRounding);
      checks.number(name + ".snapshot_seconds", find(a, "snapshot_seconds"), t.snapshot, kRounding);
      checks.number(name + ".flush_seconds", find(a, "flush_seconds"), t.flush, kRounding);
      checks.number(name + ".flush_bytes_per_second", find(a, "flush_bytes_per_second"),
                    t.flush > 0 ? static_cast<double>(t.file_bytes) / t.flush : 0.0, kRounding);
      checks.number(name + ".buffer_bytes", find(a, "buffer_bytes"), static_cast<double>(t.buffer_bytes), kExact);
      stall_sum += t.stall;
      stall_max = std::max(stall_max, t.stall);
    }
  if (reported_saves != saves.size())
    checks.problem("trainio.checkpoint.checkpoints async saves",
                   fmt::format("the summary lists {} asynchronous saves, the records {}", reported_saves, saves.size()));
  checks.number("trainio.checkpoint.async.saves", find(*totals, "saves"), static_cast<double>(saves.size()), kExact);
  checks.number("trainio.checkpoint.async.stall_seconds", find(*totals, "stall_seconds"), stall_sum, kRounding, true);
  checks.number("trainio.checkpoint.async.stall_seconds_max", find(*totals, "stall_seconds_max"), stall_max, kRounding);

  // Each epoch: its training steps with and without a flush running.
  if (const json* list = find(summary, "trainio/epochs"); list && list->is_array())
    for (const json& e : *list) {
      const auto epoch = e.at("epoch").get<std::uint64_t>();
      const std::string name = fmt::format("trainio.epochs epoch {} flush_overlap", epoch);
      const json* reported = e.contains("flush_overlap") ? &e.at("flush_overlap") : nullptr;
      const auto it = epochs.find(epoch);
      if (it == epochs.end()) {
        if (reported) checks.problem(name, "no rank's records have its async_overlap line");
        continue;
      }
      check_side(name + ".during_flush", reported ? find(*reported, "during_flush") : nullptr, it->second.during, checks);
      check_side(name + ".without_flush", reported ? find(*reported, "without_flush") : nullptr, it->second.without, checks);
      const SideTotals &d = it->second.during, &o = it->second.without;
      const std::optional<double> ratio =
          d.ranks > 0 && o.ranks > 0 && o.rate_sum > 0 ? std::optional(d.rate_sum / o.rate_sum) : std::nullopt;
      checks.number(name + ".read_ratio", reported ? find(*reported, "read_ratio") : nullptr, ratio, kRounding);
    }
}

}  // namespace trainio::verify
