#include "report/dlio_files.hpp"

#include <fmt/format.h>

#include <cmath>
#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

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

json floats(const std::vector<float>& v, std::size_t first, std::size_t last) {
  json a = json::array();
  for (std::size_t i = first; i < last; ++i) a.push_back(static_cast<double>(v[i]));
  return a;
}

// Seconds between two of DLIO's timestamps.
double seconds_between(const std::string& start, const std::string& end) {
  auto parse = [](const std::string& s) {
    std::tm tm{};
    double micros = 0;
    if (std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%d.%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                    &tm.tm_sec, &micros) != 7)
      return 0.0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    return static_cast<double>(std::mktime(&tm)) + micros * 1e-6;
  };
  return parse(end) - parse(start);
}

// DLIO writes epoch, block and evaluation durations as strings with two decimals.
std::string duration_text(const std::string& start, const std::string& end) {
  return fmt::format("{:.2f}", seconds_between(start, end));
}

json span(const std::string& start, const std::string& end) {
  return {{"start", start}, {"end", end}, {"duration", duration_text(start, end)}};
}

json checkpoint_entry(const metrics::CheckpointRecord& c, double checkpoint_gib) {
  return {{"start", c.start},
          {"end", c.end},
          {"duration", c.seconds},
          {"throughput", c.seconds > 0 ? checkpoint_gib / c.seconds : 0.0}};
}

std::string checkpoint_key(const metrics::CheckpointRecord& c) {
  return fmt::format("{}_ckpt{}", c.kind == metrics::CheckpointRecord::Kind::save ? "save" : "load", c.block);
}

}  // namespace

double data_bytes_per_host(const config::Workload& w, const plan::DatasetLayout& layout, int ranks_on_host, int ranks) {
  const double samples = std::floor(static_cast<double>(ranks_on_host) * static_cast<double>(w.dataset.num_samples_per_file) *
                                    static_cast<double>(w.dataset.num_files_train) / std::max(1, ranks));
  return samples * layout.nominal_record_bytes();
}

std::string dlio_output_json(const metrics::RankRecord& record, const RankHost& host) {
  json o;
  o["host_memory_GB"] = host.memory_gib;
  o["host_cpu_count"] = host.cpu_count;
  o["host_processor_name"] = host.machine;
  o["potential_caching"] = host.potential_caching ? 1 : 0;
  o["host_cpuinfo"] = key_values("/proc/cpuinfo");
  o["host_meminfo"] = key_values("/proc/meminfo");
  for (const auto& e : record.epochs) {
    json je;
    json load = json::object(), proc = json::object(), compute = json::object(), throughput = json::object(),
         au = json::object();
    // The phase's step lists, cut into DLIO's blocks.
    std::size_t first = 0;
    for (std::size_t b = 0; b < e.train.blocks.size(); ++b) {
      const auto& block = e.train.blocks[b];
      const std::string key = fmt::format("block{}", b + 1);
      const auto last = std::min(first + block.steps, e.train.step_load.size());
      load[key] = floats(e.train.step_load, first, last);
      proc[key] = floats(e.train.step_proc, first, last);
      compute[key] = floats(e.train.step_compute, first, last);
      throughput[key] = maybe(block.throughput);
      au[key] = maybe(block.au, 100);
      first = last;
    }
    if (e.evaluated) {
      load["eval"] = floats(e.eval.step_load, 0, e.eval.step_load.size());
      proc["eval"] = floats(e.eval.step_proc, 0, e.eval.step_proc.size());
      compute["eval"] = floats(e.eval.step_compute, 0, e.eval.step_compute.size());
      throughput["eval"] = maybe(e.eval.block.throughput_dlio);
      au["eval"] = maybe(e.eval.block.au, 100);
    }
    je["load"] = load;
    je["proc"] = proc;
    je["throughput"] = throughput;
    je["au"] = au;
    je["compute"] = compute;
    json meminfo = json::object();
    for (const auto& [k, v] : e.host_meminfo) meminfo[k] = v;
    je["host_meminfo"] = meminfo;
    je["end"] = e.end;
    o[std::to_string(e.epoch)] = je;
  }
  if (record.epochs.empty() && !record.checkpoints.empty())
    o["1"] = {{"start", record.checkpoints.front().start}, {"load", json::object()}, {"proc", json::object()},
              {"throughput", json::object()}, {"au", json::object()}, {"compute", json::object()},
              {"end", record.checkpoints.back().end}};
  o["hostname"] = host.hostname;
  return o.dump(4) + "\n";
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
