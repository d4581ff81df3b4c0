#include "report/dlio_files.hpp"

#include <fmt/format.h>

#include <cmath>
#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "util/clock.hpp"
#include "util/proc_stats.hpp"

namespace trainio::report {

namespace {

using json = nlohmann::ordered_json;

json key_values(const std::string& path) {
  json o = json::object();
  for (const auto& [k, v] : util::proc_key_values(path)) o[k] = v;
  return o;
}

// A figure that may have no value: null then (as in summary.json, whose notes say why).
json maybe(const std::optional<double>& v, double scale = 1) { return v ? json(*v * scale) : json(nullptr); }

// A phase's values per block ("block1", ...), then the evaluation's ("eval") if it ran.
template <typename OfBlock>
json per_block(const metrics::EpochTimeline& e, OfBlock of_block, const json& eval) {
  json o = json::object();
  for (std::size_t b = 0; b < e.train.blocks.size(); ++b) o[fmt::format("block{}", b + 1)] = of_block(e.train.blocks[b]);
  if (e.evaluated) o["eval"] = eval;
  return o;
}

// Writes an epoch's per-step lists from the step log, a chunk of steps at a time.
class StepLists {
 public:
  explicit StepLists(metrics::StepLog& log) : log_(log), chunk_(4096) {}

  // {"block1": [...], ..., "eval": [...]}: one field of the epoch's steps.
  void write_phase(const metrics::EpochTimeline& e, float metrics::StepTimes::*field, JsonStream& out) {
    out.begin_object();
    std::uint64_t first = e.train.first_step;
    const std::uint64_t train_end = e.train.first_step + e.train.steps_logged;
    for (std::size_t b = 0; b < e.train.blocks.size(); ++b) {
      out.key(fmt::format("block{}", b + 1));
      const std::uint64_t last = std::min(first + e.train.blocks[b].steps, train_end);
      write_list(first, last, field, out);
      first = last;
    }
    if (e.evaluated) {
      out.key("eval");
      write_list(e.eval.first_step, e.eval.first_step + e.eval.steps_logged, field, out);
    }
    out.end_object();
  }

 private:
  void write_list(std::uint64_t first, std::uint64_t last, float metrics::StepTimes::*field, JsonStream& out) {
    out.begin_array();
    while (first < last) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_.size(), last - first));
      log_.read(first, std::span(chunk_.data(), n));
      for (std::size_t i = 0; i < n; ++i) out.number(static_cast<double>(chunk_[i].*field));
      first += n;
    }
    out.end_array();
  }

  metrics::StepLog& log_;
  std::vector<metrics::StepTimes> chunk_;
};

// DLIO writes epoch, block and evaluation durations as strings with two decimals.
std::string duration_text(const std::string& start, const std::string& end) {
  return fmt::format("{:.2f}", util::seconds_between(start, end));
}

json span(const std::string& start, const std::string& end) {
  return {{"start", start}, {"end", end}, {"duration", duration_text(start, end)}};
}

json checkpoint_entry(const metrics::CheckpointTimeline& c, double checkpoint_gib) {
  return {{"start", c.start},
          {"end", c.end},
          {"duration", c.seconds},
          {"throughput", c.seconds > 0 ? checkpoint_gib / c.seconds : 0.0}};
}

std::string checkpoint_key(const metrics::CheckpointTimeline& c) {
  return fmt::format("{}_ckpt{}", c.kind == metrics::CheckpointRecord::Kind::save ? "save" : "load", c.block);
}

}  // namespace

double data_bytes_per_host(const config::Workload& w, const plan::DatasetLayout& layout, int ranks_on_host, int ranks) {
  const double samples = std::floor(static_cast<double>(ranks_on_host) * static_cast<double>(w.dataset.num_samples_per_file) *
                                    static_cast<double>(w.dataset.num_files_train) / std::max(1, ranks));
  return samples * layout.nominal_record_bytes();
}

void dlio_output_json(const metrics::RankRecord& record, const RankHost& host, JsonStream& out) {
  out.begin_object();
  out.key("host_memory_GB");
  out.number(host.memory_gib);
  out.key("host_cpu_count");
  out.value(host.cpu_count);
  out.key("host_processor_name");
  out.value(host.machine);
  out.key("potential_caching");
  out.value(host.potential_caching ? 1 : 0);
  out.key("host_cpuinfo");
  out.value(key_values("/proc/cpuinfo"));
  out.key("host_meminfo");
  out.value(key_values("/proc/meminfo"));
  StepLists lists(*record.steps);
  for (const auto& e : record.epochs) {
    out.key(std::to_string(e.epoch));
    out.begin_object();
    // The phase's step lists, cut into DLIO's blocks, one list per field.
    for (const auto field : {&metrics::StepTimes::load, &metrics::StepTimes::proc}) {
      out.key(field == &metrics::StepTimes::load ? "load" : "proc");
      lists.write_phase(e, field, out);
    }
    out.key("throughput");
    out.value(per_block(e, [](const metrics::DlioBlock& b) { return maybe(b.throughput); },
                        maybe(e.eval.block.throughput_dlio)));
    out.key("au");
    out.value(per_block(e, [](const metrics::DlioBlock& b) { return maybe(b.au, 100); }, maybe(e.eval.block.au, 100)));
    out.key("compute");
    lists.write_phase(e, &metrics::StepTimes::compute, out);
    // trainio's: each step's wait for the other ranks after its compute (DLIO keeps none).
    out.key("barrier");
    lists.write_phase(e, &metrics::StepTimes::barrier, out);
    json meminfo = json::object();
    for (const auto& [k, v] : e.host_meminfo) meminfo[k] = v;
    out.key("host_meminfo");
    out.value(meminfo);
    out.key("end");
    out.value(e.end);
    out.end_object();
  }
  if (record.epochs.empty() && !record.checkpoints.empty()) {
    out.key("1");
    out.value({{"start", record.checkpoints.front().start}, {"load", json::object()}, {"proc", json::object()},
               {"throughput", json::object()}, {"au", json::object()}, {"compute", json::object()},
               {"end", record.checkpoints.back().end}});
  }
  out.key("hostname");
  out.value(host.hostname);
  out.end_object();
}

std::string dlio_per_epoch_stats_json(const metrics::RankRecord& record, double checkpoint_gib) {
  json o = json::object();
  for (const auto& e : record.epochs) {
    json je;
    je["start"] = e.train.start;
    // block1, save_ckpt1, block2, ...: each block, then the checkpoint that ended it.
    for (std::size_t b = 0; b < e.train.blocks.size(); ++b) {
      je[fmt::format("block{}", b + 1)] = span(e.train.blocks[b].start, e.train.blocks[b].end);
      for (const auto& c : record.checkpoints)
        if (c.epoch == e.epoch && c.kind == metrics::CheckpointRecord::Kind::save && c.block == b + 1)
          je[checkpoint_key(c)] = checkpoint_entry(c, checkpoint_gib);
    }
    je["end"] = e.end;
    je["duration"] = duration_text(e.train.start, e.train.end);
    if (e.evaluated) je["eval"] = span(e.eval.start, e.eval.end);
    o[std::to_string(e.epoch)] = je;
  }
  if (record.epochs.empty() && !record.checkpoints.empty()) {
    // Checkpoint-only: epoch 1 holds the saves, then the loads (numbered from 1 again).
    json je;
    je["start"] = record.checkpoints.front().start;
    for (const auto& c : record.checkpoints) je[checkpoint_key(c)] = checkpoint_entry(c, checkpoint_gib);
    je["end"] = record.checkpoints.back().end;
    o["1"] = je;
  }
  return o.dump(4) + "\n";
}

}  // namespace trainio::report
