#include "report/summary_json.hpp"

#include <optional>

#include <nlohmann/json.hpp>

#include "plan/checkpoint_plan.hpp"
#include "report/config_json.hpp"
#include "report/dlio_files.hpp"
#include "report/dlio_figures.hpp"
#include "report/phase_json.hpp"
#include "util/build_info.hpp"
#include "util/proc_stats.hpp"

namespace trainio::report {

namespace {

using json = nlohmann::ordered_json;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

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

}  // namespace

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
                  {"launcher", launcher_json(context.launcher)},
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
                   {"config", workload_config_json(w)}};
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
