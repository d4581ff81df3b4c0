#include "report/summary_json.hpp"

#include <numeric>
#include <optional>

#include <nlohmann/json.hpp>

#include "metrics/client_capacity.hpp"
#include "plan/checkpoint_plan.hpp"
#include "plan/reshard.hpp"
#include "report/async_json.hpp"
#include "report/config_json.hpp"
#include "report/dlio_files.hpp"
#include "report/dlio_figures.hpp"
#include "report/phase_json.hpp"
#include "util/build_info.hpp"
#include "util/clock.hpp"
#include "util/proc_stats.hpp"
#include "util/stop_request.hpp"
#include "util/units.hpp"

namespace trainio::report {

namespace {

using json = nlohmann::ordered_json;

// How many accelerators this client could feed (metrics/client_capacity.hpp), with its evidence.
json client_capacity_json(const metrics::RunSummary& run, const config::Workload& w) {
  const metrics::CapacityInputs in = metrics::capacity_inputs(run, run.client_cores, w.metric.au);
  const metrics::ClientCapacity c = metrics::client_capacity(in);
  return {{"accelerators", c.accelerators ? json(*c.accelerators) : json(nullptr)},
          {"accelerators_beside_others", c.accelerators_beside_others ? json(*c.accelerators_beside_others) : json(nullptr)},
          {"reason", c.reason},
          {"formula", metrics::kCapacityFormula},
          {"evidence",
           {{"ranks", in.ranks},
            {"steps_per_rank", in.steps},
            {"compute_seconds", in.compute_seconds},
            {"bytes_read", in.bytes_read},
            {"cpu_seconds", in.cpu_seconds},
            {"cpu_polling_seconds", in.cpu_polling_seconds},
            {"duration_seconds", in.duration_seconds},
            {"cores", in.cores},
            {"host_idle_share", in.host_ticks_total > 0 ? json(static_cast<double>(in.host_ticks_idle) /
                                                                static_cast<double>(in.host_ticks_total))
                                                         : json(nullptr)},
            {"au_target", in.au_target},
            {"demand_bytes_per_second", maybe(c.demand_bytes_per_second)},
            {"cpu_seconds_per_byte", maybe(c.cpu_seconds_per_byte)},
            {"cpu_seconds_per_step", maybe(c.cpu_seconds_per_step)},
            {"cores_per_accelerator", maybe(c.cores_per_accelerator)},
            {"other_cores_busy", maybe(c.other_cores_busy)},
            {"available_cores", maybe(c.available_cores)}}}};
}

json proc_json(const std::string& path) {
  json o = json::object();
  for (const auto& [k, v] : util::proc_key_values(path)) o[k] = v;
  return o;
}

// What started the ranks; the Slurm job and step when inside an allocation (null outside).
json launcher_json(const mpi::Launcher& l) {
  json slurm = nullptr;
  if (l.slurm) {
    const auto text_or_null = [](const std::string& v) { return v.empty() ? json(nullptr) : json(v); };
    slurm = {{"job_id", l.slurm->job_id},
             {"step_id", text_or_null(l.slurm->step_id)},
             {"node_list", text_or_null(l.slurm->node_list)},
             {"tasks", l.slurm->tasks > 0 ? json(l.slurm->tasks) : json(nullptr)}};
  }
  return {{"name", l.name}, {"slurm", slurm}};
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

// The figures every part of the summary draws on, worked out before the first byte is written.
struct Figures {
  json metric = json::object();
  std::vector<FigureNote> notes;
  std::optional<DlioFigures> train;
  std::optional<plan::CheckpointPlan> checkpoint_plan;
};

// `saved_ranks`: the ranks of the job whose checkpoints were loaded (plan::saved_rank_count).
Figures figures(const config::Workload& w, const plan::DatasetLayout& layout, const metrics::RunSummary& run, int saved_ranks) {
  Figures f;
  if (!run.epochs.empty()) {
    f.train = dlio_figures(run, "train", layout.nominal_record_bytes(), w);
    dlio_metrics(f.metric, "train", *f.train);
    f.notes = f.train->notes;
    const DlioFigures eval = dlio_figures(run, "eval", layout.nominal_record_bytes(), w);
    if (!eval.au.empty()) {
      dlio_metrics(f.metric, "eval", eval);
      f.notes.insert(f.notes.end(), eval.notes.begin(), eval.notes.end());
    }
  }
  if (w.workflow.checkpoint) {
    f.checkpoint_plan.emplace(w, saved_ranks);
    checkpoint_metrics(f.metric, run, static_cast<double>(f.checkpoint_plan->total_bytes()) / util::kGiB);
  }
  return f;
}

// 0, 1, ... for each host of the run: per-host lists stream by index. (Not std::views::iota:
// clang 14, which builds the sanitizer copies, cannot compile libstdc++ 12's.)
std::vector<std::size_t> host_indices(const RunContext& context) {
  std::vector<std::size_t> hosts(context.hosts.size());
  std::iota(hosts.begin(), hosts.end(), std::size_t{0});
  return hosts;
}

// A list of one value per element of `items`, streamed one at a time.
template <typename Items, typename Value>
void stream_list(JsonStream& out, std::string_view name, const Items& items, Value&& value) {
  out.key(name);
  out.begin_array();
  for (const auto& item : items) out.value(value(item));
  out.end_array();
}

// DLIO's keys, in DLIO's order. Per-host lists stream one host at a time.
void dlio_part(JsonStream& out, const config::Workload& w, const plan::DatasetLayout& layout,
               const metrics::RunSummary& run, const RunContext& context, const json& metric) {
  const std::vector<std::size_t> hosts = host_indices(context);
  out.field("start", run.start);
  out.field("num_accelerators", run.ranks);
  out.field("num_hosts", run.hosts);
  out.field("hostname", context.hosts.empty() ? "" : context.hosts[0].hostname);
  out.field("metric", metric);
  out.field("num_files_train", w.dataset.num_files_train);
  out.field("num_files_eval", w.dataset.num_files_eval);
  out.field("num_samples_per_file", w.dataset.num_samples_per_file);
  stream_list(out, "host_cpu_count", hosts, [&](std::size_t h) { return json(context.hosts[h].cpu_count); });
  out.field("host_processor_name", context.hosts.empty() ? "" : context.hosts[0].machine);
  // DLIO: potential caching per host when the host's share of the dataset fits in its memory.
  stream_list(out, "potential_caching", hosts, [&](std::size_t h) {
    const double share = data_bytes_per_host(w, layout, context.ranks_per_host[h], context.ranks);
    return json(static_cast<double>(context.hosts[h].memory_bytes) > share ? 1 : 0);
  });
  out.field("host_cpuinfo", proc_json("/proc/cpuinfo"));
  out.field("host_meminfo", proc_json("/proc/meminfo"));
  stream_list(out, "host_memory_GB", hosts,
              [&](std::size_t h) { return json(static_cast<double>(context.hosts[h].memory_bytes) / util::kGiB); });
  out.field("data_size_per_host_GB", context.hosts.empty()
                                         ? 0.0
                                         : data_bytes_per_host(w, layout, context.ranks_per_host[0], context.ranks) / util::kGiB);
  out.field("epochs", run.epochs.size());
  out.field("end", run.end);
}

void context_part(JsonStream& out, const metrics::RunSummary& run, const RunContext& context) {
  out.key("context");
  out.begin_object();
  out.field("trainio_version", util::version());
  out.field("git_commit", util::git_commit());
  out.field("build_type", util::build_type());
  out.field("compiler", util::compiler());
  out.field("mpi_library", context.mpi_library);
  out.field("launcher", launcher_json(context.launcher));
  out.field("command_line", context.command_line);
  out.field("ranks", context.ranks);
  stream_list(out, "hosts", host_indices(context), [&](std::size_t h) {
    const auto& host = context.hosts[h];
    return json{{"hostname", host.hostname}, {"ranks", context.ranks_per_host[h]}, {"cpu_count", host.cpu_count},
                {"cpu_model", host.cpu_model}, {"memory_bytes", host.memory_bytes}, {"kernel", host.kernel},
                {"machine", host.machine}};
  });
  out.field("data_folder", context.data_folder);
  out.field("data_filesystem", context.data_fs_type);
  out.field("output_folder", context.output_dir);
  out.field("cores_per_rank", context.cores_per_rank);
  out.field("start", run.start);
  out.field("end", run.end);
  out.end_object();
}

json plan_json(const plan::DatasetLayout& layout, const plan::RunShape& shape) {
  return {{"train_samples", shape.train_samples},
          {"train_steps_per_epoch_per_rank", shape.train_steps_per_epoch},
          {"train_samples_dropped_per_epoch", shape.train_dropped_per_epoch},
          {"eval_samples", shape.eval_samples},
          {"eval_steps_per_rank", shape.eval_steps},
          {"eval_samples_dropped", shape.eval_dropped},
          {"epochs", shape.epochs},
          {"nominal_record_bytes", layout.nominal_record_bytes()},
          {"train_dataset_bytes", layout.total_data_bytes(plan::Split::train)}};
}

json generate_json(const metrics::GenerateSummary& g) {
  json o = {{"duration_seconds", g.durable_seconds},
          {"files_written", g.files_written},
          {"files_kept", g.files_kept},
          {"bytes_written", g.bytes_written},
          {"write_seconds", g.seconds},
          {"write_bytes_per_second", g.write_bandwidth},
          {"durable_seconds", g.durable_seconds},
          {"durable_bytes_per_second", g.durable_bandwidth},
          {"io", io_json(g.io)},
          {"characterization", characterization_json(g.io)}};
  if (g.io.requests().requests() > 0) o["requests"] = requests_json(g.io.requests());
  return o;
}

// The cache tier's settings, the staging before the first epoch, and the training epochs together.
json cache_part(const config::Workload& w, const metrics::RunSummary& run) {
  metrics::TierStats train;
  for (const auto& e : run.epochs) train.merge(e.train.tier);
  const auto& s = run.staging;
  return {{"tier", config::to_string(w.cache.tier)},
          {"path", w.cache.tier == config::CacheTier::local_ssd ? json(w.cache.path) : json(nullptr)},
          {"capacity_bytes_per_node", w.cache.capacity},
          {"policy", config::to_string(w.cache.policy)},
          {"staging", config::to_string(w.cache.staging)},
          {"staged", w.cache.staging == config::CacheStaging::before_first_epoch
                         ? json{{"seconds", run.staging_seconds},
                                {"files", s.fills},
                                {"bytes", s.tier_write_bytes},
                                {"backing_read_bytes", s.backing_read_bytes},
                                {"bytes_per_second", run.staging_seconds > 0 ? static_cast<double>(s.tier_write_bytes) / run.staging_seconds : 0.0},
                                {"files_not_admitted", s.not_admitted}}
                         : json(nullptr)},
          {"train", tier_json(train)}};
}

// The run's training figures, then every epoch streamed one at a time.
void epochs_part(JsonStream& out, const config::Workload& w, const metrics::RunSummary& run, const RunContext& context,
                 const DlioFigures& train) {
  std::vector<double> exact, bandwidth;
  std::uint64_t samples = 0;
  metrics::PageCacheStats train_cache, eval_cache;
  bool evaluated = false;
  for (const auto& e : run.epochs) {
    exact.push_back(e.train.throughput);
    bandwidth.push_back(e.train.read_bandwidth);
    samples += e.train.samples;
    train_cache.merge(e.train.io.page_cache());
    if (e.evaluated) eval_cache.merge(e.eval.io.page_cache());
    evaluated = evaluated || e.evaluated;
  }
  out.field("train", {{"stopped_by_time_limit", run.stopped_by_time_limit},
                      {"au_mean_percentage", maybe(train.au_mean)},
                      {"au_target_percentage", w.metric.au * 100},
                      {"throughput_mean_samples_per_second", metrics::mean_of(exact)},
                      {"throughput_stdev_samples_per_second", metrics::stdev_of(exact)},
                      {"read_bytes_per_second_mean", metrics::mean_of(bandwidth)},
                      {"samples", samples},
                      {"page_cache", page_cache_json(train_cache)},
                      // Every epoch's training together: the end-of-run table's latency rows.
                      {"sample_read_seconds", latency_json(run.train_sample_ns)},
                      {"batch_wait_seconds", latency_json(run.train_wait_ns)},
                      {"client_capacity", client_capacity_json(run, w)}});
  if (evaluated) out.field("eval", {{"page_cache", page_cache_json(eval_cache)}});
  if (w.cache.tier != config::CacheTier::none) out.field("cache", cache_part(w, run));
  stream_list(out, "epochs", run.epochs, [&](const metrics::EpochSummary& e) {
    json je = {{"epoch", e.epoch}, {"start", e.start}, {"end", e.end}, {"train", phase_json(e.train, context)}};
    if (e.evaluated) je["eval"] = phase_json(e.eval, context);
    if (e.flush_overlap) je["flush_overlap"] = flush_overlap_json(*e.flush_overlap);
    return je;
  });
}

// trainio's figure beside DLIO's mean of per-checkpoint rates (which one fast checkpoint
// dominates): every checkpoint's bytes over their durations together, and the spread of the rates.
json checkpoint_totals_json(const metrics::RunSummary& run, metrics::CheckpointRecord::Kind kind) {
  std::uint64_t count = 0, bytes = 0;
  double seconds = 0, low = 0, high = 0;
  for (const auto& c : run.checkpoints) {
    if (c.kind != kind) continue;
    low = count == 0 ? c.bandwidth : std::min(low, c.bandwidth);
    high = count == 0 ? c.bandwidth : std::max(high, c.bandwidth);
    ++count;
    bytes += c.file_bytes;
    seconds += c.duration;
  }
  if (count == 0) return nullptr;
  return {{"count", count},
          {"file_bytes", bytes},
          {"duration_seconds", seconds},
          {"bytes_per_second", seconds > 0 ? static_cast<double>(bytes) / seconds : 0.0},
          {"bytes_per_second_min", low},
          {"bytes_per_second_max", high}};
}

void checkpoint_part(JsonStream& out, const config::Workload& w, const metrics::RunSummary& run,
                     const plan::CheckpointPlan& plan) {
  const auto& m = w.model;
  metrics::PageCacheStats load_cache;  // the loads' reads
  for (const auto& c : run.checkpoints)
    if (c.kind == metrics::CheckpointRecord::Kind::load) load_cache.merge(c.io.page_cache());
  out.key("checkpoint");
  out.begin_object();
  out.field("parameters", plan.parameters());
  out.field("tensor", m.parallelism.tensor);
  out.field("pipeline", m.parallelism.pipeline);
  out.field("data", plan.data_parallelism());
  out.field("zero_stage", m.parallelism.zero_stage);
  out.field("subset", plan.subset());
  out.field("writing_ranks", plan.writing_ranks());
  out.field("tensor_bytes", plan.total_bytes());
  out.field("model_bytes", plan.model_bytes());
  out.field("optimizer_bytes", plan.optimizer_bytes());
  out.field("largest_rank_bytes", plan.max_rank_bytes());
  out.field("page_cache", page_cache_json(load_cache));
  out.field("saves", checkpoint_totals_json(run, metrics::CheckpointRecord::Kind::save));
  out.field("loads", checkpoint_totals_json(run, metrics::CheckpointRecord::Kind::load));
  if (w.checkpoint.async) out.field("async", async_totals_json(w, run));
  stream_list(out, "checkpoints", run.checkpoints, [](const metrics::CheckpointSummary& c) { return checkpoint_json(c); });
  out.end_object();
}

// When the ranks started, how long until they first read checkpoint data, and with --resume-from
// the failover gap: each from the records' process starts and first reads (docs/checkpoints.md).
json startup_json(const metrics::StartupSummary& s, const std::optional<Failover>& failover) {
  json out;
  out["process_start"] = s.known ? json(util::wall_time_iso_of_us(s.first_process_start_us)) : json(nullptr);
  out["first_checkpoint_read_seconds"] =
      s.ranks_loaded > 0 ? json{{"max", s.first_read_max},
                                 {"min", s.first_read_min},
                                 {"slowest_rank", s.first_read_slowest_rank},
                                 {"ranks", s.ranks_loaded}}
                          : json(nullptr);
  if (failover) {
    const auto gap = failover_gap(*failover, s);
    out["failover"] = {{"previous_results", failover->previous_results},
                       {"previous_end", failover->previous_end},
                       {"gap_seconds", gap ? json(*gap) : json(nullptr)},
                       {"limit_seconds", kFailoverLimitSeconds},
                       {"within_limit", gap ? json(*gap <= kFailoverLimitSeconds) : json(nullptr)}};
  } else {
    out["failover"] = nullptr;
  }
  return out;
}

}  // namespace

void summary_json(JsonStream& out, const config::Workload& w, const plan::DatasetLayout& layout,
                  const plan::RunShape& shape, const metrics::RunSummary& run, const RunContext& context) {
  const Figures f =
      figures(w, layout, run, plan::saved_rank_count(w, run.ranks, context.failover ? context.failover->previous_ranks : 0));
  out.begin_object();
  dlio_part(out, w, layout, run, context, f.metric);
  out.key("trainio");
  out.begin_object();
  out.field("schema_version", kSchemaVersion);
  // A run a signal stopped keeps what it measured, and says it is not the whole of its plan.
  out.field("complete", run.stop_signal == 0);
  out.field("stopped", run.stop_signal == 0 ? json(nullptr)
                                            : json{{"reason", util::signal_name(run.stop_signal)},
                                                   {"signal", run.stop_signal},
                                                   {"epoch", run.stop_epoch},
                                                   {"phase", run.stop_phase}});
  context_part(out, run, context);
  out.field("characterization", characterization_json(run.io));
  json notes = json::array();
  for (const auto& n : w.notes) notes.push_back(n.message);
  out.field("workload", {{"name", w.name}, {"source", w.source}, {"overrides", w.overrides}, {"notes", notes},
                         {"config", workload_config_json(w)}});
  out.field("plan", plan_json(layout, shape));
  if (run.generate.ran) out.field("generate", generate_json(run.generate));
  if (!run.epochs.empty()) epochs_part(out, w, run, context, *f.train);
  if (f.checkpoint_plan) checkpoint_part(out, w, run, *f.checkpoint_plan);
  out.field("startup", startup_json(run.startup, context.failover));
  // Figures of this summary without a value (null), or with a value from some epochs only, and why.
  stream_list(out, "notes", f.notes, [](const FigureNote& n) { return json{{"figure", n.figure}, {"cause", n.cause}}; });
  out.end_object();
  out.end_object();
}

}  // namespace trainio::report
