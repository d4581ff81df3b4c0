#include "campaign/max_accelerators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "campaign/job.hpp"
#include "campaign/outcome.hpp"
#include "config/load.hpp"
#include "engine/preflight.hpp"
#include "plan/accelerator_demand.hpp"
#include "plan/layout.hpp"
#include "storage/fs.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"
#include "util/units.hpp"

namespace trainio::campaign {

int next_probe(int passed, int failed, int ranks_to) {
  if (failed == 0) {
    // Doubling: 1, 2, 4, ..., then the limit itself when it is not a power of two.
    const int next = passed == 0 ? 1 : passed * 2;
    if (next <= ranks_to) return next;
    return passed < ranks_to ? ranks_to : 0;
  }
  if (failed - passed <= 1) return 0;
  return passed + (failed - passed) / 2;  // bisection
}

int run_max_accelerators(const MaxAcceleratorsSpec& spec) {
  const config::SplitArgs args = config::split_args(spec.words);
  const config::Workload w = config::load(args.workload, args.overrides);
  if (!w.workflow.train)
    throw usage_error(fmt::format("workload '{}' does not train (workflow.train is false): there is no AU to meet", w.name),
                      "search with a training workload, e.g. unet3d_h100");
  engine::preflight(w, 1, false);  // the first probe can run (more ranks may need more data: probes say so)
  claim_folder(spec.output, "max-accelerators", spec.words);
  std::printf("max-accelerators: the largest rank count, up to %d, whose AU meets %.0f%% (metric.au), into %s "
              "(launcher: %s)\n",
              spec.ranks_to, w.metric.au * 100, spec.output.c_str(), spec.launcher.c_str());
  struct Probe {
    RunFigures figures;
    std::string folder;
  };
  std::map<int, Probe> probes;
  int passed = 0, failed = 0;
  for (int n = next_probe(passed, failed, spec.ranks_to); n > 0; n = next_probe(passed, failed, spec.ranks_to)) {
    Job job{n, spec.words, util::join(spec.output, fmt::format("ranks={}", n))};
    std::printf("ranks %d: ", n);
    std::fflush(stdout);
    const JobOutcome outcome = run_job(job, spec.launcher);
    std::printf("%s\n", outcome_line(outcome).c_str());
    std::fflush(stdout);
    if (!outcome.result) {
      // A run that breaks says nothing about AU: stop rather than count it as a failure to keep up.
      throw io_error(fmt::format("the probe with {} ranks did not finish (exit {}): see {}", n, outcome.exit_code, outcome.log),
                     "fix what its log names, then rerun the same command: finished probes are kept");
    }
    const RunFigures f = figures_of(*outcome.result);
    if (f.verdict == "unknown")
      throw io_error(fmt::format("the probe with {} ranks has no AU verdict (too few steps to measure): see {}/summary.json",
                                 n, job.folder),
                     "give each run more steps (train.epochs, or a larger dataset), then rerun");
    probes[n] = {f, job.folder};
    if (f.verdict == "pass") passed = n;
    else failed = n;
  }

  nlohmann::ordered_json doc;
  doc["workload"] = w.name;
  doc["au_target_percent"] = w.metric.au * 100;
  doc["ranks_to"] = spec.ranks_to;
  doc["max_accelerators"] = passed;
  doc["first_failing"] = failed > 0 ? nlohmann::ordered_json(failed) : nlohmann::ordered_json(nullptr);
  std::string csv =
      "ranks,au_mean_percent,au_min_percent,samples_per_second,read_MiB_per_second,verdict,limited_by,client_capacity,folder\n";
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  // Figures without a value are null in the JSON and empty in the CSV.
  const auto value = [](double v) { return std::isnan(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v); };
  const auto text = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{:.2f}", v); };
  for (const auto& [n, p] : probes) {
    const auto& f = p.figures;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double au = f.au_mean.value_or(nan), samples = f.samples_per_second.value_or(nan);
    const double au_min = f.au_lowest_epoch.value_or(nan);
    const double read_mib = f.read_bytes_per_second.value_or(nan) / (1024.0 * 1024.0);
    const Limit limit = limit_of(f);
    const auto capacity = f.client_capacity ? nlohmann::ordered_json(*f.client_capacity) : nlohmann::ordered_json(nullptr);
    list.push_back({{"ranks", n}, {"au_mean_percent", value(au)}, {"au_min_percent", value(au_min)},
                    {"samples_per_second", value(samples)}, {"read_MiB_per_second", value(read_mib)},
                    {"verdict", f.verdict}, {"limited_by", limit.by}, {"bottlenecks", f.bottlenecks},
                    {"client_capacity", capacity}, {"folder", p.folder}});
    csv += fmt::format("{},{},{},{},{},{},{},{},{}\n", n, text(au), text(au_min), text(samples), text(read_mib), f.verdict,
                       limit.by, f.client_capacity ? std::to_string(*f.client_capacity) : std::string(), p.folder);
  }
  doc["probes"] = list;
  // What set the stopping point: the first failing probe's bottleneck verdicts; beside it, the
  // client's own estimate of how many accelerators it could feed (docs/metrics.md), from the
  // largest probe that ran.
  std::string stop_line;
  if (failed > 0) {
    const Limit limit = limit_of(probes[failed].figures);
    doc["limited_by"] = {{"by", limit.by}, {"probe_ranks", failed}, {"why", limit.why}};
    stop_line = fmt::format("stopping point set by: {} (the {}-rank probe: {})", limit.by, failed, limit.why);
  } else {
    doc["limited_by"] = nullptr;
    stop_line = "stopping point set by: --ranks-to (no probe missed the target)";
  }
  const RunFigures& largest = probes.rbegin()->second.figures;
  doc["client_capacity"] = largest.client_capacity ? nlohmann::ordered_json(*largest.client_capacity) : nlohmann::ordered_json(nullptr);
  stop_line += largest.client_capacity
                   ? fmt::format("; the client's own estimate: {} accelerators (from the {}-rank probe)", *largest.client_capacity,
                                 probes.rbegin()->first)
                   : fmt::format("; the client's own estimate: unknown (the {}-rank probe has none)", probes.rbegin()->first);
  // The model's prediction beside the measurement (plan/accelerator_demand.hpp).
  const double demand = plan::accelerator_demand(w, plan::DatasetLayout(w));
  std::string prediction;
  if (spec.storage_bandwidth > 0 && demand > 0 && w.metric.au > 0) {
    const long predicted = plan::predicted_accelerators(spec.storage_bandwidth, demand, w.metric.au);
    doc["prediction"] = {{"storage_bandwidth_bytes_per_second", spec.storage_bandwidth},
                         {"demand_bytes_per_second_per_accelerator", demand},
                         {"max_accelerators", predicted}};
    prediction = fmt::format("predicted from {} and {} per accelerator: {} (measured: {})",
                             util::format_rate(spec.storage_bandwidth), util::format_rate(demand), predicted, passed);
  }
  storage::write_file_atomic(util::join(spec.output, "max-accelerators.json"), doc.dump(2) + "\n");
  storage::write_file_atomic(util::join(spec.output, "max-accelerators.csv"), csv);
  if (passed == 0) {
    std::printf("answer: none; even 1 rank misses the AU target of %.0f%% on this storage\n", w.metric.au * 100);
  } else if (failed == 0) {
    std::printf("answer: %d ranks, the most tried (--ranks-to): every probe met the AU target of %.0f%%; "
                "the storage may feed more\n", passed, w.metric.au * 100);
  } else {
    std::printf("answer: %d ranks meet the AU target of %.0f%%; %d do not\n", passed, w.metric.au * 100, failed);
  }
  std::printf("%s\n", stop_line.c_str());
  if (!prediction.empty()) std::printf("%s\n", prediction.c_str());
  std::printf("evidence: %s\n", util::join(spec.output, "max-accelerators.csv").c_str());
  return 0;
}

}  // namespace trainio::campaign
