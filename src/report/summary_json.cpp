#include "report/summary_json.hpp"

#include <yaml-cpp/yaml.h>

#include <optional>

#include <nlohmann/json.hpp>

#include "config/dump.hpp"
#include "plan/checkpoint_plan.hpp"
#include "report/dlio_files.hpp"
#include "report/dlio_figures.hpp"
#include "storage/io_observer.hpp"
#include "storage/page_residency.hpp"
#include "util/build_info.hpp"
#include "util/proc_stats.hpp"

namespace trainio::report {

namespace {

using json = nlohmann::ordered_json;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

json yaml_to_json(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return nullptr;
  if (n.IsSequence()) {
    json a = json::array();
    for (const auto& item : n) a.push_back(yaml_to_json(item));
    return a;
  }
  if (n.IsMap()) {
    json o = json::object();
    for (const auto& item : n) o[item.first.Scalar()] = yaml_to_json(item.second);
    return o;
  }
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted in the YAML: always text
  if (s == "true") return true;
  if (s == "false") return false;
  try {
    size_t used = 0;
    const long long i = std::stoll(s, &used);
    if (used == s.size()) return i;
    const double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (...) {
  }
  return s;
}

json resolved_config(const config::Workload& w) {
  json root = json::object();
  for (const auto& [path, value] : config::resolved_values(w)) {
    json* node = &root;
    size_t start = 0;
    while (true) {
      const auto dot = path.find('.', start);
      const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (dot == std::string::npos) {
        (*node)[part] = yaml_to_json(YAML::Load(value));
        break;
      }
      node = &(*node)[part];
      start = dot + 1;
    }
  }
  return root;
}

json latency_json(const metrics::Histogram& h) {
  auto s = [](std::uint64_t ns) { return static_cast<double>(ns) * 1e-9; };
  return {{"count", h.count()},     {"mean", h.mean() * 1e-9},    {"p50", s(h.quantile(0.50))},
          {"p90", s(h.quantile(0.90))}, {"p99", s(h.quantile(0.99))}, {"p99_9", s(h.quantile(0.999))},
          {"max", s(h.max())}};
}

json io_json(const metrics::IoRecorder& io) {
  json o = json::object();
  for (int i = 0; i < storage::kOpCount; ++i) {
    const auto op = static_cast<storage::Op>(i);
    const auto& s = io.op(op);
    if (s.count == 0) continue;
    o[storage::op_name(op)] = {{"count", s.count}, {"bytes", s.bytes}, {"seconds", static_cast<double>(s.ns) * 1e-9},
                               {"latency_seconds", latency_json(s.latency)}};
  }
  return o;
}

// A figure that may have no value: null then (summary.json's notes say why).
json maybe(const std::optional<double>& v, double scale = 1) { return v ? json(*v * scale) : json(nullptr); }

json proc_json(const std::string& path) {
  json o = json::object();
  for (const auto& [k, v] : util::proc_key_values(path)) o[k] = v;
  return o;
}

json profile_json(const metrics::AccessProfile& a) {
  json reads = json::object(), writes = json::object();
  for (int b = 0; b < metrics::kSizeBuckets; ++b) {
    reads[metrics::size_bucket_name(b)] = a.read_sizes[static_cast<std::size_t>(b)];
    writes[metrics::size_bucket_name(b)] = a.write_sizes[static_cast<std::size_t>(b)];
  }
  json common = json::array();
  for (const auto& [size, calls] : a.top_sizes(4)) common.push_back({{"bytes", size}, {"calls", calls}});
  return {{"reads", a.reads},
          {"writes", a.writes},
          {"bytes_read", a.bytes_read},
          {"bytes_written", a.bytes_written},
          {"read_size_histogram", reads},
          {"write_size_histogram", writes},
          {"sequential_reads", a.sequential_reads},
          {"consecutive_reads", a.consecutive_reads},
          {"sequential_writes", a.sequential_writes},
          {"consecutive_writes", a.consecutive_writes},
          {"metadata_calls", a.metadata_ops},
          {"metadata_seconds", static_cast<double>(a.metadata_ns) * 1e-9},
          {"data_seconds", static_cast<double>(a.data_ns) * 1e-9},
          {"distinct_files_estimate", std::llround(a.files.estimate())},
          {"common_access_sizes", common}};
}

json characterization_json(const metrics::IoRecorder& io) {
  return {{"data_files", profile_json(io.data_files())}, {"other_files", profile_json(io.other_files())}};
}

json stragglers_json(const metrics::PhaseSummary& p, const RunContext& context) {
  if (p.ranks.empty()) return nullptr;
  const auto& slow = p.ranks[static_cast<std::size_t>(p.slowest_rank)];
  const auto& fast = p.ranks[static_cast<std::size_t>(p.fastest_rank)];
  // Per host: its ranks' samples and bytes, and its slowest rank's time.
  std::vector<json> hosts;
  std::vector<double> host_slowest;
  std::vector<std::uint64_t> host_samples, host_bytes, host_ranks;
  for (const auto& r : p.ranks) {
    const auto h = static_cast<std::size_t>(r.host);
    if (h >= host_slowest.size()) {
      host_slowest.resize(h + 1, 0);
      host_samples.resize(h + 1, 0);
      host_bytes.resize(h + 1, 0);
      host_ranks.resize(h + 1, 0);
    }
    host_slowest[h] = std::max(host_slowest[h], r.duration);
    host_samples[h] += r.samples;
    host_bytes[h] += r.bytes_read;
    ++host_ranks[h];
  }
  json per_host = json::array();
  for (std::size_t h = 0; h < host_slowest.size(); ++h)
    per_host.push_back({{"host", h < context.hosts.size() ? context.hosts[h].hostname : std::to_string(h)},
                        {"ranks", host_ranks[h]},
                        {"slowest_rank_seconds", host_slowest[h]},
                        {"samples", host_samples[h]},
                        {"bytes_read", host_bytes[h]},
                        {"read_bytes_per_second", host_slowest[h] > 0 ? static_cast<double>(host_bytes[h]) / host_slowest[h] : 0.0}});
  return {{"slowest_rank", slow.rank},
          {"slowest_rank_seconds", slow.duration},
          {"fastest_rank", fast.rank},
          {"fastest_rank_seconds", fast.duration},
          {"first_done_read_bytes_per_second", p.first_done_bandwidth},
          {"last_done_read_bytes_per_second", p.last_done_bandwidth},
          {"hosts", per_host}};
}

json client_cost_json(const metrics::PhaseSummary& p) {
  const double cpu = p.cpu_user + p.cpu_sys;
  const double gib = static_cast<double>(p.bytes_read) / kGiB;
  return {{"cpu_user_seconds", p.cpu_user},
          {"cpu_sys_seconds", p.cpu_sys},
          {"cpu_seconds_per_GiB_read", gib > 0 ? cpu / gib : 0.0},
          {"cpu_cores_busy", p.duration > 0 ? cpu / p.duration : 0.0}};
}

// Where a rank's step time went, summed over the phase and averaged over the ranks.
json step_breakdown_json(const metrics::PhaseSummary& p, int ranks) {
  const double per_rank = 1e-9 / std::max(1, ranks);
  return {{"batch_wait", p.wait_ns.sum() * per_rank},
          {"compute", p.compute_ns.sum() * per_rank},
          {"barrier", p.barrier_ns.sum() * per_rank}};
}

// What the reads hit (docs/storage.md): the verdict, and the evidence it rests on.
json page_cache_json(const metrics::PageCacheStats& c) {
  const metrics::PageCacheVerdict v = metrics::page_cache_verdict(c);
  const std::uint64_t page = storage::page_bytes();
  return {{"verdict", metrics::verdict_name(v.verdict)},
          {"resident_fraction", v.resident_fraction ? json(*v.resident_fraction) : json(nullptr)},
          {"method", v.method},
          {"reason", v.reason.empty() ? json(nullptr) : json(v.reason)},
          {"probes", c.probes},
          {"probed_bytes", c.probed_pages * page},
          {"resident_bytes", c.resident_pages * page},
          {"read_bytes", c.read_bytes},
          {"direct_bytes", c.direct_bytes}};
}

json phase_json(const metrics::PhaseSummary& p, const RunContext& context) {
  return {{"steps_per_rank", p.steps},
          {"duration_seconds", p.duration},
          {"au_percentage", maybe(p.au, 100)},
          {"au_min_rank_percentage", p.au ? json(p.au_min * 100) : json(nullptr)},
          {"au_max_rank_percentage", p.au ? json(p.au_max * 100) : json(nullptr)},
          {"throughput_samples_per_second", p.throughput},
          {"dlio_throughput_samples_per_second", maybe(p.throughput_dlio)},
          {"too_few_steps_to_exclude", p.degenerate},
          {"samples", p.samples},
          {"sample_bytes", p.sample_bytes},
          {"bytes_read", p.bytes_read},
          {"read_bytes_per_second", p.read_bandwidth},
          {"storage_read_bytes", p.storage_read_known ? json(p.storage_read_bytes) : json(nullptr)},
          {"device_read_bytes", p.device_read_known ? json(p.device_read_bytes) : json(nullptr)},
          {"served_from_page_cache", metrics::served_from_cache(p)},
          {"page_cache", page_cache_json(p.io.page_cache())},
          {"batch_wait_seconds", latency_json(p.wait_ns)},
          {"compute_seconds", latency_json(p.compute_ns)},
          {"barrier_seconds", latency_json(p.barrier_ns)},
          {"step_seconds_per_rank", step_breakdown_json(p, context.ranks)},
          {"sample_read_seconds", latency_json(p.sample_ns)},
          {"io", io_json(p.io)},
          {"characterization", characterization_json(p.io)},
          {"stragglers", stragglers_json(p, context)},
          {"client_cost", client_cost_json(p)}};
}

// DLIO's metric block for one phase ("train" or "eval"); figures without a value are null.
void dlio_metrics(json& metric, const std::string& prefix, const DlioFigures& f) {
  json au = json::array(), throughput = json::array();
  for (const auto& v : f.au) au.push_back(maybe(v));
  for (const auto& v : f.throughput) throughput.push_back(maybe(v));
  metric[prefix + "_au_percentage"] = au;
  metric[prefix + "_au_mean_percentage"] = maybe(f.au_mean);
  metric[prefix + "_au_stdev_percentage"] = maybe(f.au_stdev);
  metric[prefix + "_throughput_samples_per_second"] = throughput;
  metric[prefix + "_throughput_mean_samples_per_second"] = maybe(f.throughput_mean);
  metric[prefix + "_throughput_stdev_samples_per_second"] = maybe(f.throughput_stdev);
  metric[prefix + "_io_mean_MB_per_second"] = maybe(f.io_mean);
  metric[prefix + "_io_stdev_MB_per_second"] = maybe(f.io_stdev);
  metric[prefix + "_au_meet_expectation"] = f.au_meets ? json(*f.au_meets ? "success" : "fail") : json(nullptr);
}

json checkpoint_json(const metrics::CheckpointSummary& c) {
  return {{"kind", c.kind == metrics::CheckpointRecord::Kind::save ? "save" : "load"},
          {"index", c.index},
          {"epoch", c.epoch},
          {"step", c.step},
          {"folder", c.folder},
          {"start", c.start},
          {"end", c.end},
          {"duration_seconds", c.duration},
          {"fastest_rank_seconds", c.fastest},
          {"files", c.files},
          {"tensor_bytes", c.tensor_bytes},
          {"file_bytes", c.file_bytes},
          {"bytes_per_second", c.bandwidth},
          {"rank_bytes_per_second_min", c.rank_bandwidth_min},
          {"rank_bytes_per_second_max", c.rank_bandwidth_max},
          {"ranks_with_data", c.ranks_with_data},
          {"storage_read_bytes", c.kind == metrics::CheckpointRecord::Kind::load && c.storage_read_known
                                     ? json(c.storage_read_bytes)
                                     : json(nullptr)},
          {"page_cache", c.kind == metrics::CheckpointRecord::Kind::load ? page_cache_json(c.io.page_cache()) : json(nullptr)},
          {"io", io_json(c.io)},
          {"characterization", characterization_json(c.io)}};
}

// DLIO's checkpoint metrics, with MLPerf's rule for a checkpoint's duration (the slowest rank;
// DLIO takes rank 0's): GiB/s = checkpoint size / duration, mean and stdev over checkpoints.
// Where DLIO writes NaN for an empty list (not valid JSON), trainio writes null.
void checkpoint_metrics(json& metric, const metrics::RunSummary& run, double size_gib) {
  for (const auto kind : {metrics::CheckpointRecord::Kind::save, metrics::CheckpointRecord::Kind::load}) {
    const std::string prefix = kind == metrics::CheckpointRecord::Kind::save ? "save" : "load";
    std::vector<double> rate, seconds;
    for (const auto& c : run.checkpoints) {
      if (c.kind != kind) continue;
      seconds.push_back(c.duration);
      rate.push_back(c.duration > 0 ? size_gib / c.duration : 0);
    }
    if (rate.empty() && kind == metrics::CheckpointRecord::Kind::load) continue;
    auto value = [&](double v) { return rate.empty() ? json(nullptr) : json(v); };
    metric[prefix + "_checkpoint_io_mean_GB_per_second"] = value(metrics::mean_of(rate));
    metric[prefix + "_checkpoint_io_stdev_GB_per_second"] = value(metrics::stdev_of(rate));
    metric[prefix + "_checkpoint_duration_mean_seconds"] = value(metrics::mean_of(seconds));
    metric[prefix + "_checkpoint_duration_stdev_seconds"] = value(metrics::stdev_of(seconds));
  }
  metric["checkpoint_size_GB"] = size_gib;
}

}  // namespace

nlohmann::ordered_json workload_config_json(const config::Workload& w) { return resolved_config(w); }

std::string summary_json(const config::Workload& w, const plan::DatasetLayout& layout, const plan::RunShape& shape,
                         const metrics::RunSummary& run, const RunContext& context) {
  std::vector<double> train_bw;
  for (const auto& e : run.epochs) train_bw.push_back(e.train.read_bandwidth);
  json metric = json::object();
  std::vector<FigureNote> figure_notes;
  std::optional<DlioFigures> train_figures;
  if (!run.epochs.empty()) {
    train_figures = dlio_figures(run, "train", layout.nominal_record_bytes(), w);
    dlio_metrics(metric, "train", *train_figures);
    figure_notes = train_figures->notes;
    const DlioFigures eval = dlio_figures(run, "eval", layout.nominal_record_bytes(), w);
    if (!eval.au.empty()) {
      dlio_metrics(metric, "eval", eval);
      figure_notes.insert(figure_notes.end(), eval.notes.begin(), eval.notes.end());
    }
  }

  std::optional<plan::CheckpointPlan> checkpoint_plan;
  if (w.workflow.checkpoint) {
    checkpoint_plan.emplace(w, run.ranks);
    checkpoint_metrics(metric, run, static_cast<double>(checkpoint_plan->total_bytes()) / kGiB);
  }

  // DLIO: potential caching per host when the host's share of the dataset fits in its memory.
  json cpu_counts = json::array(), memory = json::array(), caching = json::array();
  for (size_t h = 0; h < context.hosts.size(); ++h) {
    const double share = data_bytes_per_host(w, layout, context.ranks_per_host[h], context.ranks);
    cpu_counts.push_back(context.hosts[h].cpu_count);
    memory.push_back(static_cast<double>(context.hosts[h].memory_bytes) / kGiB);
    caching.push_back(static_cast<double>(context.hosts[h].memory_bytes) > share ? 1 : 0);
  }

  json s;
  s["start"] = run.start;
  s["num_accelerators"] = run.ranks;
  s["num_hosts"] = run.hosts;
  s["hostname"] = context.hosts.empty() ? "" : context.hosts[0].hostname;
  s["metric"] = metric;
  s["num_files_train"] = w.dataset.num_files_train;
  s["num_files_eval"] = w.dataset.num_files_eval;
  s["num_samples_per_file"] = w.dataset.num_samples_per_file;
  s["host_cpu_count"] = cpu_counts;
  s["host_processor_name"] = context.hosts.empty() ? "" : context.hosts[0].machine;
  s["potential_caching"] = caching;
  s["host_cpuinfo"] = proc_json("/proc/cpuinfo");
  s["host_meminfo"] = proc_json("/proc/meminfo");
  s["host_memory_GB"] = memory;
  s["data_size_per_host_GB"] =
      context.hosts.empty() ? 0.0 : data_bytes_per_host(w, layout, context.ranks_per_host[0], context.ranks) / kGiB;
  s["epochs"] = run.epochs.size();
  s["end"] = run.end;

  json t;
  t["schema_version"] = kSchemaVersion;
  json hosts = json::array();
  for (size_t h = 0; h < context.hosts.size(); ++h) {
    const auto& host = context.hosts[h];
    hosts.push_back({{"hostname", host.hostname}, {"ranks", context.ranks_per_host[h]}, {"cpu_count", host.cpu_count},
                     {"cpu_model", host.cpu_model}, {"memory_bytes", host.memory_bytes}, {"kernel", host.kernel}, {"machine", host.machine}});
  }
  t["context"] = {{"trainio_version", util::version()},
                  {"git_commit", util::git_commit()},
                  {"build_type", util::build_type()},
                  {"compiler", util::compiler()},
                  {"mpi_library", context.mpi_library},
                  {"command_line", context.command_line},
                  {"ranks", context.ranks},
                  {"hosts", hosts},
                  {"data_folder", context.data_folder},
                  {"data_filesystem", context.data_fs_type},
                  {"output_folder", context.output_dir},
                  {"cores_per_rank", context.cores_per_rank},
                  {"start", run.start},
                  {"end", run.end}};
  t["characterization"] = characterization_json(run.io);
  json notes = json::array();
  for (const auto& n : w.notes) notes.push_back(n.message);
  t["workload"] = {{"name", w.name}, {"source", w.source}, {"overrides", w.overrides}, {"notes", notes},
                   {"config", resolved_config(w)}};
  t["plan"] = {{"train_samples", shape.train_samples},
               {"train_steps_per_epoch_per_rank", shape.train_steps_per_epoch},
               {"train_samples_dropped_per_epoch", shape.train_dropped_per_epoch},
               {"eval_samples", shape.eval_samples},
               {"eval_steps_per_rank", shape.eval_steps},
               {"eval_samples_dropped", shape.eval_dropped},
               {"epochs", shape.epochs},
               {"nominal_record_bytes", layout.nominal_record_bytes()},
               {"train_dataset_bytes", layout.total_data_bytes(plan::Split::train)}};
  if (run.generate.ran) {
    t["generate"] = {{"duration_seconds", run.generate.seconds},
                     {"files_written", run.generate.files_written},
                     {"files_kept", run.generate.files_kept},
                     {"bytes_written", run.generate.bytes_written},
                     {"write_bytes_per_second", run.generate.write_bandwidth},
                     {"io", io_json(run.generate.io)},
                     {"characterization", characterization_json(run.generate.io)}};
  }
  if (!run.epochs.empty()) {
    json epochs = json::array();
    std::uint64_t samples = 0;
    for (const auto& e : run.epochs) {
      json je = {{"epoch", e.epoch}, {"start", e.start}, {"end", e.end}, {"train", phase_json(e.train, context)}};
      if (e.evaluated) je["eval"] = phase_json(e.eval, context);
      samples += e.train.samples;
      epochs.push_back(je);
    }
    std::vector<double> exact;
    metrics::PageCacheStats train_cache, eval_cache;
    bool evaluated = false;
    for (const auto& e : run.epochs) {
      exact.push_back(e.train.throughput);
      train_cache.merge(e.train.io.page_cache());
      if (e.evaluated) eval_cache.merge(e.eval.io.page_cache());
      evaluated = evaluated || e.evaluated;
    }
    t["train"] = {{"stopped_by_time_limit", run.stopped_by_time_limit},
                  {"au_mean_percentage", maybe(train_figures->au_mean)},
                  {"au_target_percentage", w.metric.au * 100},
                  {"throughput_mean_samples_per_second", metrics::mean_of(exact)},
                  {"throughput_stdev_samples_per_second", metrics::stdev_of(exact)},
                  {"read_bytes_per_second_mean", metrics::mean_of(train_bw)},
                  {"samples", samples},
                  {"page_cache", page_cache_json(train_cache)}};
    if (evaluated) t["eval"] = {{"page_cache", page_cache_json(eval_cache)}};
    t["epochs"] = epochs;
  }
  if (checkpoint_plan) {
    const auto& m = w.model;
    json list = json::array();
    metrics::PageCacheStats load_cache;
    for (const auto& c : run.checkpoints) {
      list.push_back(checkpoint_json(c));
      if (c.kind == metrics::CheckpointRecord::Kind::load) load_cache.merge(c.io.page_cache());
    }
    t["checkpoint"] = {{"parameters", checkpoint_plan->parameters()},
                       {"tensor", m.parallelism.tensor},
                       {"pipeline", m.parallelism.pipeline},
                       {"data", checkpoint_plan->data_parallelism()},
                       {"zero_stage", m.parallelism.zero_stage},
                       {"subset", checkpoint_plan->subset()},
                       {"writing_ranks", checkpoint_plan->writing_ranks()},
                       {"tensor_bytes", checkpoint_plan->total_bytes()},
                       {"model_bytes", checkpoint_plan->model_bytes()},
                       {"optimizer_bytes", checkpoint_plan->optimizer_bytes()},
                       {"largest_rank_bytes", checkpoint_plan->max_rank_bytes()},
                       {"page_cache", page_cache_json(load_cache)},  // the loads' reads
                       {"checkpoints", list}};
  }
  // Figures of this summary without a value (null), or with a value from some epochs only, and why.
  json figure_notes_json = json::array();
  for (const auto& n : figure_notes) figure_notes_json.push_back({{"figure", n.figure}, {"cause", n.cause}});
  t["notes"] = figure_notes_json;
  s["trainio"] = t;
  return s.dump(4) + "\n";
}

}  // namespace trainio::report
