#include "report/aggregate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <map>
#include <set>

#include "config/load.hpp"
#include "config/shipped_workloads.hpp"
#include "mlperf/rules.hpp"
#include "report/config_json.hpp"
#include "report/summary_json.hpp"
#include "metrics/statistics.hpp"
#include "metrics/summary.hpp"
#include "util/error.hpp"
#include "util/fnv.hpp"

namespace trainio::report {

namespace {

using json = nlohmann::ordered_json;
constexpr std::size_t kMlperfRuns = 5;
constexpr double kMlperfSpread = 0.05;

// The figures MLPerf Storage reports as results: every run must have them, within 5% of each other.
bool mlperf_result(const std::string& name) {
  return name == "train_throughput_mean_samples_per_second" || name == "save_checkpoint_io_mean_GB_per_second" ||
         name == "load_checkpoint_io_mean_GB_per_second";
}

// A resolved config as dotted paths to values (lists kept whole), to compare key by key.
void flatten(const nlohmann::json& node, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  if (node.is_object() && !node.empty()) {
    for (const auto& [key, value] : node.items()) flatten(value, prefix.empty() ? key : prefix + "." + key, out);
    return;
  }
  out[prefix] = node;
}

std::map<std::string, nlohmann::json> config_of(const RunResult& r) {
  std::map<std::string, nlohmann::json> out;
  if (const nlohmann::json* config = node_at(r.summary, "trainio.workload.config"); config && config->is_object())
    flatten(*config, "", out);
  return out;
}

std::string value_text(const std::map<std::string, nlohmann::json>& config, const std::string& key) {
  const auto it = config.find(key);
  return it == config.end() ? "absent" : it->second.dump();
}

std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const auto& k : items) out += (out.empty() ? "" : ", ") + k;
  return out;
}

// The division each run's resolved workload allows, found by comparing it with MLPerf's own values
// for that benchmark (the shipped workload), whatever route the values took: overrides, an edited
// YAML file or a --config-dir. Workloads that are not MLPerf benchmarks qualify for neither.
void mlperf_division(const std::vector<const RunResult*>& runs, Aggregate& a) {
  std::set<std::string> open, neither, foreign;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = *runs[i];
    const mlperf::Benchmark* benchmark = mlperf::find_benchmark(r.workload);
    const config::ShippedWorkload* shipped = config::find_shipped(r.workload);
    if (!benchmark || !shipped) {
      foreign.insert(r.workload.empty() ? "(unnamed)" : r.workload);
      continue;
    }
    const config::Workload canonical_workload = config::load_text(shipped->yaml, "shipped workload", r.workload);
    std::map<std::string, nlohmann::json> canonical;
    flatten(workload_config_json(canonical_workload), "", canonical);
    const auto run = config_of(r);
    if (run.empty()) {
      a.problems.push_back(fmt::format("run {} ({}) has no resolved workload in its summary: its division is unknown",
                                       i + 1, r.folder));
      neither.insert("(no resolved workload)");
      continue;
    }
    // Checkpointing: CLOSED fixes the process count (or 8 ranks writing a subset, which mlpstorage
    // sets up with checkpoint.mode and model.parallelism.data); OPEN allows multiples of TP x PP.
    bool subset = false;
    if (benchmark->kind == mlperf::Kind::checkpointing) {
      const auto ranks = std::llround(number_at(r.summary, "num_accelerators").value_or(0));
      const auto& par = canonical_workload.model.parallelism;
      const std::int64_t model_parallel = std::max<std::int64_t>(1, par.tensor * par.pipeline);
      subset = ranks == 8 && ranks < benchmark->closed_ranks && value_text(run, "checkpoint.mode") == "\"subset\"";
      if (ranks != benchmark->closed_ranks && !subset) {
        const std::string what = fmt::format("{} ranks (CLOSED: {}, or 8 writing a subset)", ranks, benchmark->closed_ranks);
        if (ranks > 0 && ranks % model_parallel == 0) open.insert(what);
        else neither.insert(fmt::format("{}; OPEN allows multiples of {}", what, model_parallel));
      }
    }
    std::set<std::string> keys;
    for (const auto& [k, v] : canonical) keys.insert(k);
    for (const auto& [k, v] : run) keys.insert(k);
    for (const auto& key : keys) {
      const std::string theirs = value_text(run, key), ours = value_text(canonical, key);
      if (theirs == ours) continue;
      if (subset && (key == "checkpoint.mode" || key == "model.parallelism.data")) continue;
      const std::string division = mlperf::division_of_key(key);
      if (division == "open") open.insert(key);
      else if (division.empty()) neither.insert(fmt::format("{} = {} (MLPerf: {})", key, theirs, ours));
    }
  }
  if (!foreign.empty())
    a.problems.push_back("not an MLPerf Storage benchmark: " + joined(foreign) +
                         " (MLPerf's: unet3d_a100/h100/b200, resnet50_a100/h100, cosmoflow_a100/h100, retinanet_b200, "
                         "llama3_8b/70b/405b/1t)");
  if (!neither.empty())
    a.problems.push_back("changed from MLPerf's values where neither division allows it: " + joined(neither));
  if (!foreign.empty() || !neither.empty()) {
    a.division = "none";
  } else if (!open.empty()) {
    a.division = "open";
    a.notes.push_back("OPEN division: changes " + joined(open));
  } else {
    a.division = "closed";
  }
}

// Whether a resolved key shapes what a run measures. The per-run seed (MLPerf asks for a new one
// each run), where results go, and whether the run generated its data first do not.
bool measured_key(const std::string& key) {
  return key != "train.seed" && key != "workflow.generate_data" && key.rfind("output.", 0) != 0;
}

// What a run measured, key by key: its resolved workload's measured keys, its workload's name,
// and its ranks and hosts.
std::map<std::string, std::string> configuration_of(const RunResult& r) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : config_of(r))
    if (measured_key(key)) out[key] = value.dump();
  out["workload"] = r.workload;
  for (const char* figure : {"num_accelerators", "num_hosts"}) {
    const auto v = number_at(r.summary, figure);
    out[figure] = v ? fmt::format("{:g}", *v) : "absent";
  }
  return out;
}

// MLPerf's result is the mean of runs of one configuration: the same measured values on the
// same number of ranks and hosts.
void mlperf_same_configuration(const std::vector<const RunResult*>& runs, Aggregate& a) {
  const auto first = configuration_of(*runs.front());
  std::set<std::string> differ;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const auto other = configuration_of(*runs[i]);
    std::set<std::string> keys;
    for (const auto& [k, v] : first) keys.insert(k);
    for (const auto& [k, v] : other) keys.insert(k);
    for (const auto& key : keys) {
      const auto x = first.find(key), y = other.find(key);
      const std::string xv = x == first.end() ? "absent" : x->second, yv = y == other.end() ? "absent" : y->second;
      if (xv != yv) differ.insert(fmt::format("{} ({} in run 1, {} in run {})", key, xv, yv, i + 1));
    }
  }
  if (!differ.empty()) a.problems.push_back("the runs mix configurations: " + joined(differ));
}

// Checks of MLPerf Storage's rules that the summaries can show.
void mlperf_checks(const std::vector<const RunResult*>& runs, Aggregate& a) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string au = text_at(runs[i]->summary, "metric.train_au_meet_expectation");
    if (!au.empty() && au != "success")
      a.problems.push_back(fmt::format("run {} ({}) does not meet the AU expectation", i + 1, runs[i]->folder));
    if (const auto* verdict = node_at(runs[i]->summary, "metric.train_au_meet_expectation"); verdict && verdict->is_null())
      a.problems.push_back(fmt::format("run {} ({}) has no AU verdict (too few steps: see its trainio.notes)", i + 1,
                                       runs[i]->folder));
    if (i > 0 && !runs[i - 1]->end.empty() && runs[i]->start < runs[i - 1]->end)
      a.problems.push_back(fmt::format("run {} started before run {} ended: runs must follow each other", i + 1, i));
  }
  std::set<std::string> seeds;
  for (const auto* r : runs) {
    const std::string config = "trainio.workload.config.";
    const bool random = text_at(r->summary, config + "reader.file_shuffle") == "random" ||
                        text_at(r->summary, config + "reader.sample_shuffle") == "random";
    const nlohmann::json* seed = node_at(r->summary, config + "train.seed");
    seeds.insert(random || !seed ? r->folder : seed->dump());
  }
  if (seeds.size() < runs.size())
    a.problems.push_back("some runs share a seed: MLPerf asks for a new seed every run (give each run its own train.seed=N: the benchmark's "
                         "per-run seed, allowed in both divisions)");
  for (const auto& f : a.figures) {
    if (!mlperf_result(f.name)) continue;
    if (!f.spread)
      a.problems.push_back(fmt::format("{} has no spread (its mean is 0): it cannot be shown within 5%", f.name));
    else if (!*f.within_5_percent)
      a.problems.push_back(fmt::format("{} varies by {:.1f}% between runs (MLPerf: within 5%)", f.name, *f.spread * 100));
  }
}

std::string configuration_id(const std::map<std::string, std::string>& configuration) {
  std::uint64_t h = util::kFnvOffset;
  for (const auto& [key, value] : configuration) {
    h = util::fnv1a(h, key);
    h = util::fnv1a(h, std::string_view("=", 1));
    h = util::fnv1a(h, value);
    h = util::fnv1a(h, std::string_view("\n", 1));
  }
  return fmt::format("{:016x}", h).substr(0, 12);
}

std::vector<const RunResult*> pointers_to(const std::vector<RunResult>& runs) {
  std::vector<const RunResult*> out;
  for (const auto& r : runs) out.push_back(&r);
  return out;
}

Aggregate aggregate_of(std::vector<const RunResult*> runs, bool mlperf) {
  Aggregate a;
  a.mlperf = mlperf;
  std::stable_sort(runs.begin(), runs.end(), [](const auto* x, const auto* y) { return x->start < y->start; });
  if (mlperf) {
    if (runs.size() < kMlperfRuns + 1)
      throw usage_error(fmt::format("--mlperf needs a warm-up run and {} runs; {} given", kMlperfRuns, runs.size()),
                        "give the folders of 6 consecutive runs (the first is the warm-up)");
    a.warmup = runs.front()->folder;
    runs.erase(runs.begin());
    if (runs.size() > kMlperfRuns) {
      a.notes.push_back(fmt::format("{} runs after the warm-up: the last {} are used", runs.size(), kMlperfRuns));
      runs.erase(runs.begin(), runs.end() - kMlperfRuns);
    }
  }
  a.workload = runs.front()->workload;
  a.configuration = configuration_id(configuration_of(*runs.front()));
  std::set<std::string> workloads;
  for (const auto* r : runs) {
    a.runs.push_back(r->folder);
    workloads.insert(r->workload);
  }
  if (workloads.size() > 1) a.problems.push_back("the runs are of different workloads: their figures do not aggregate");
  // A run a signal stopped measured part of its plan: its figures are not the configuration's.
  for (const auto* r : runs)
    if (const auto why = incomplete_reason(*r))
      (mlperf ? a.problems : a.notes).push_back(fmt::format("run {} is incomplete: {}", r->folder, *why));
  std::vector<std::string> zero_means;  // figures whose CV and spread have no value
  for (const auto& f : known_figures()) {
    FigureStats s;
    s.name = f.name;
    s.unit = f.unit;
    for (const auto* r : runs)
      if (auto v = figure_of(*r, f.name)) s.values.push_back(*v);
    if (s.values.empty()) continue;  // not measured in these runs
    if (s.values.size() != runs.size()) {
      a.missing.push_back(s.name);
      continue;
    }
    s.mean = metrics::mean_of(s.values);
    if (s.values.size() > 1) s.stdev = metrics::stdev_of(s.values);
    s.cv = metrics::cv_of(s.values);
    s.spread = metrics::spread_of(s.values);
    if (s.spread) s.within_5_percent = *s.spread <= kMlperfSpread;
    else if (s.values.size() > 1) zero_means.push_back(s.name);
    a.figures.push_back(std::move(s));
  }
  if (runs.size() == 1)
    a.notes.push_back("1 run: stdev, CV and spread need 2 or more runs (n/a; null in JSON), and the 5% check has "
                      "nothing to check");
  if (!zero_means.empty()) {
    std::string names;
    for (const auto& n : zero_means) names += (names.empty() ? "" : ", ") + n;
    a.notes.push_back(fmt::format("mean 0, so CV and spread have no value (n/a; null in JSON): {}", names));
  }
  for (const auto& name : a.missing) {
    (mlperf && mlperf_result(name) ? a.problems : a.notes).push_back(fmt::format("{} is missing from some runs: not aggregated", name));
  }
  if (mlperf) {
    mlperf_checks(runs, a);
    mlperf_same_configuration(runs, a);
    mlperf_division(runs, a);
  }
  return a;
}

}  // namespace

Aggregate aggregate_runs(const std::vector<RunResult>& runs, bool mlperf) { return aggregate_of(pointers_to(runs), mlperf); }

std::vector<Aggregate> aggregate_by_configuration(const std::vector<RunResult>& all) {
  std::vector<const RunResult*> runs = pointers_to(all);
  std::stable_sort(runs.begin(), runs.end(), [](const auto* x, const auto* y) { return x->start < y->start; });
  std::vector<std::map<std::string, std::string>> configurations;  // one per group, in group order
  std::vector<std::vector<const RunResult*>> members;
  for (const auto* r : runs) {
    const auto configuration = configuration_of(*r);
    const auto it = std::find(configurations.begin(), configurations.end(), configuration);
    if (it == configurations.end()) {
      configurations.push_back(configuration);
      members.push_back({r});
    } else {
      members[static_cast<std::size_t>(it - configurations.begin())].push_back(r);
    }
  }
  // What sets each group apart: the keys whose values are not the same in every group.
  std::set<std::string> keys, varying;
  for (const auto& c : configurations)
    for (const auto& [k, v] : c) keys.insert(k);
  for (const auto& key : keys) {
    std::set<std::string> values;
    for (const auto& c : configurations) values.insert(c.count(key) ? c.at(key) : "absent");
    if (values.size() > 1) varying.insert(key);
  }
  std::vector<Aggregate> groups;
  for (std::size_t g = 0; g < members.size(); ++g) {
    Aggregate a = aggregate_of(members[g], false);
    for (const auto& key : varying)
      a.distinguished_by.push_back(key + "=" + (configurations[g].count(key) ? configurations[g].at(key) : "absent"));
    groups.push_back(std::move(a));
  }
  return groups;
}

namespace {

std::string percent_text(const std::optional<double>& fraction) {
  return fraction ? fmt::format("{:.2f}%", *fraction * 100) : std::string("n/a");
}

// A figure that has no value: null, never a number standing in for it.
json or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::string one_aggregate_text(const Aggregate& a) {
  std::string out = fmt::format("{}: {} run{}{}\n", a.workload.empty() ? "runs" : a.workload, a.runs.size(),
                                a.runs.size() == 1 ? "" : "s",
                                a.warmup.empty() ? "" : fmt::format(" after the warm-up ({})", a.warmup));
  out += fmt::format("  {:<42} {:>16} {:>14} {:>7} {:>7}\n", "figure", "mean", "stdev", "CV", "spread");
  for (const auto& f : a.figures)
    out += fmt::format("  {:<42} {:>16} {:>14} {:>7} {:>7}{}\n", f.name, figure_text(f.mean, f.unit),
                       f.stdev ? figure_text(*f.stdev, f.unit) : std::string("n/a"), percent_text(f.cv),
                       percent_text(f.spread), f.within_5_percent == false ? "  SPREAD > 5%" : "");
  if (a.mlperf)
    out += fmt::format("  MLPerf checks: {} (division: {})\n", a.problems.empty() ? "pass" : "FAIL", a.division);
  for (const auto& p : a.problems) out += "  - " + p + "\n";
  for (const auto& n : a.notes) out += "  note: " + n + "\n";
  return out;
}

json one_aggregate_json(const Aggregate& a) {
  json o;
  o["workload"] = a.workload;
  o["configuration"] = a.configuration;
  if (!a.distinguished_by.empty()) o["distinguished_by"] = a.distinguished_by;
  o["runs"] = a.runs;
  if (!a.warmup.empty()) o["warmup"] = a.warmup;
  json figures = json::object();
  for (const auto& f : a.figures)
    figures[f.name] = {{"unit", f.unit},           {"values", f.values},        {"mean", f.mean},
                       {"stdev", or_null(f.stdev)}, {"cv", or_null(f.cv)},       {"spread", or_null(f.spread)},
                       {"within_5_percent", f.within_5_percent ? json(*f.within_5_percent) : json(nullptr)}};
  o["figures"] = figures;
  if (a.mlperf) o["mlperf"] = {{"pass", a.problems.empty()}, {"division", a.division}, {"problems", a.problems}};
  else o["problems"] = a.problems;
  o["notes"] = a.notes;
  return o;
}

}  // namespace

std::string aggregate_text(const std::vector<Aggregate>& groups) {
  if (groups.size() == 1) return one_aggregate_text(groups.front());
  std::size_t runs = 0;
  for (const auto& g : groups) runs += g.runs.size();
  std::string out = fmt::format("{} runs of {} configurations, each aggregated on its own:\n", runs, groups.size());
  for (const auto& g : groups) {
    std::string by;
    for (const auto& d : g.distinguished_by) by += (by.empty() ? "" : ", ") + d;
    out += fmt::format("\nconfiguration {} ({})\n", g.configuration, by);
    out += one_aggregate_text(g);
  }
  return out;
}

std::string aggregate_json(const std::vector<Aggregate>& groups) {
  if (groups.size() == 1) return one_aggregate_json(groups.front()).dump(4) + "\n";
  json list = json::array();
  for (const auto& g : groups) list.push_back(one_aggregate_json(g));
  return json{{"configurations", list}}.dump(4) + "\n";
}

std::string run_text(const RunResult& run) {
  // The end-of-run table the run kept beside its summary: the same words the console showed.
  // Runs without it (older trainio, DLIO itself) get a table made from the summary.
  if (std::string kept = kept_table(run); !kept.empty()) return kept;
  const auto& s = run.summary;
  const auto ranks = std::llround(number_at(s, "num_accelerators").value_or(0));
  const auto hosts = std::llround(number_at(s, "num_hosts").value_or(0));
  std::string out = fmt::format("{} - {} rank{} on {} host{} ({} to {})\n", run.workload.empty() ? run.folder : run.workload,
                                ranks, ranks == 1 ? "" : "s", hosts, hosts == 1 ? "" : "s", run.start, run.end);
  if (auto au = number_at(s, "metric.train_au_mean_percentage")) {
    const std::string verdict = text_at(s, "metric.train_au_meet_expectation");
    const auto* verdict_node = node_at(s, "metric.train_au_meet_expectation");
    out += fmt::format("  {:<26} {:.2f}%  {}\n", "accelerator util. (AU)", *au,
                       verdict_node && verdict_node->is_null() ? "no verdict (see trainio.notes)"
                       : verdict.empty()                       ? ""
                       : verdict == "success"                  ? "PASS"
                                                               : "FAIL");
  }
  for (const auto& f : known_figures()) {
    if (std::string(f.name) == "train_au_mean_percentage") continue;
    if (auto v = figure_of(run, f.name)) out += fmt::format("  {:<42} {}\n", f.name, figure_text(*v, f.unit));
  }
  int cached = 0, epochs = 0;
  if (const nlohmann::json* list = node_at(s, "trainio.epochs"); list && list->is_array())
    for (const auto& e : *list) {
      ++epochs;
      // The verdict of what the reads hit; summaries older than it carry only the flag.
      if (const nlohmann::json* verdict = node_at(e, "train.page_cache.verdict"); verdict && verdict->is_string()) {
        cached += verdict->get<std::string>() == "page_cache" ? 1 : 0;
        continue;
      }
      const nlohmann::json* cache = node_at(e, "train.served_from_page_cache");
      cached += cache && cache->is_boolean() && cache->get<bool>() ? 1 : 0;
    }
  if (cached > 0) out += fmt::format("  caching: {} of {} epochs were served from the page cache\n", cached, epochs);
  return out;
}

}  // namespace trainio::report
