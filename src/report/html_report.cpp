#include "report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "report/markup.hpp"
#include "report/svg_chart.hpp"
#include "util/paths.hpp"
#include "util/units.hpp"

namespace trainio::report {

namespace {


std::string page(const std::string& title, const std::string& body) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{0}</title>
<style>
body {{ font-family: sans-serif; margin: 24px; color: #222; }}
h1 {{ font-size: 22px; }} h2 {{ font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ccc; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 12px; }}
.chart {{ border: 1px solid #eee; background: #fff; }}
pre {{ background: #f6f6f6; padding: 12px; overflow-x: auto; font-size: 12px; }}
table {{ border-collapse: collapse; font-size: 13px; }} td, th {{ border: 1px solid #ccc; padding: 4px 8px; text-align: right; }}
.pass {{ color: #2ca02c; font-weight: bold; }} .fail {{ color: #d62728; font-weight: bold; }}
</style></head><body>
<h1>{0}</h1>
{1}
<p><small>Written by trainio. Figures come from each run's summary.json; what each means is in docs/metrics.md.</small></p>
</body></html>
)",
                     markup_escape(title), body);
}

double number_or_nan(const nlohmann::json& root, const std::string& dotted) {
  return number_at(root, dotted).value_or(NAN);
}

// Each phase's requests to S3 (docs/s3.md): how many and how fast, the time to first byte, the
// retries and the answers; empty for a run without an object store.
std::string s3_table(const nlohmann::json& s) {
  std::vector<std::pair<std::string, const nlohmann::json*>> phases;
  if (const auto* g = node_at(s, "trainio.generate")) phases.emplace_back("generation", g);
  if (const auto* list = node_at(s, "trainio.epochs"); list && list->is_array())
    for (const auto& e : *list)
      for (const char* part : {"train", "eval"})
        if (e.is_object() && e.contains(part)) phases.emplace_back(fmt::format("epoch {:g} {}", number_or_nan(e, "epoch"), part), &e.at(part));
  if (const auto* list = node_at(s, "trainio.checkpoint.checkpoints"); list && list->is_array())
    for (const auto& k : *list) phases.emplace_back(fmt::format("checkpoint {} {:g}", text_at(k, "kind"), number_or_nan(k, "index")), &k);
  std::string rows;
  const auto seconds = [](double v) { return std::isfinite(v) ? util::format_duration(v) : std::string("-"); };
  for (const auto& [name, phase] : phases) {
    const nlohmann::json* r = node_at(*phase, "requests");
    if (!r || !r->is_object()) continue;
    const double count = number_or_nan(*r, "count"), duration = number_or_nan(*phase, "duration_seconds");
    const auto statuses = [&](const char* key) {
      std::string out;
      if (const auto* by = node_at(*r, key); by && by->is_object())
        for (const auto& [status, n] : by->items()) out += fmt::format("{}{} &times;{}", out.empty() ? "" : ", ", markup_escape(status), n.dump());
      return out;
    };
    const double retries = number_or_nan(*r, "retries");
    rows += fmt::format("<tr><td>{}</td><td>{:.0f}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0f}{}</td><td>{}</td></tr>\n",
                        markup_escape(name), count, duration > 0 ? fmt::format("{:.1f}", count / duration) : "-",
                        seconds(number_or_nan(*r, "first_byte_seconds.p50")), seconds(number_or_nan(*r, "first_byte_seconds.p99")),
                        retries, retries > 0 ? " (after " + statuses("retries_by_status") + ")" : "", statuses("by_status"));
  }
  if (rows.empty()) return "";
  return "<table><tr><th>S3 requests</th><th>requests</th><th>per second</th><th>first byte p50</th><th>first byte p99</th>"
         "<th>retries</th><th>answers (HTTP status)</th></tr>\n" + rows + "</table>\n";
}

// Each rank's training step time over the run, split into its own batch wait, its compute and its
// wait at the barrier for the others, from the run's per_rank.csv (columns batch_wait_seconds,
// compute_seconds, barrier_seconds, summed over epochs); the first kRanksDrawn ranks. Empty for
// a run of one rank, or without those columns.
constexpr std::size_t kRanksDrawn = 64;
std::string per_rank_chart(const RunResult& run) {
  std::ifstream in(util::join(run.folder, "per_rank.csv"));
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  std::map<std::string, std::size_t> column;
  {
    std::stringstream header(line);
    std::string name;
    for (std::size_t i = 0; std::getline(header, name, ','); ++i) column[name] = i;
  }
  for (const char* c : {"phase", "rank", "batch_wait_seconds", "compute_seconds", "barrier_seconds"})
    if (!column.count(c)) return "";
  std::map<long, std::array<double, 3>> ranks;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    auto at = [&](const char* c) { return column[c] < cells.size() ? cells[column[c]] : std::string(); };
    if (at("phase") != "train") continue;
    const long rank = std::strtol(at("rank").c_str(), nullptr, 10);
    if (rank < 0 || (ranks.size() >= kRanksDrawn && !ranks.count(rank))) continue;
    auto& split = ranks[rank];
    split[0] += std::strtod(at("batch_wait_seconds").c_str(), nullptr);
    split[1] += std::strtod(at("compute_seconds").c_str(), nullptr);
    split[2] += std::strtod(at("barrier_seconds").c_str(), nullptr);
  }
  if (ranks.size() < 2) return "";
  Chart c;
  c.kind = Chart::Kind::stacked_bars;
  c.title = ranks.size() >= kRanksDrawn ? fmt::format("Each rank's training step time, all epochs (first {} ranks)", kRanksDrawn)
                                        : "Each rank's training step time, all epochs";
  c.x_label = "rank";
  c.y_label = "seconds";
  ChartSeries wait{"own batch wait", {}}, compute{"compute", {}}, barrier{"waiting for the others (barrier)", {}};
  for (const auto& [rank, split] : ranks) {
    c.categories.push_back(std::to_string(rank));
    wait.values.push_back(split[0]);
    compute.values.push_back(split[1]);
    barrier.values.push_back(split[2]);
  }
  c.series = {wait, compute, barrier};
  return svg_chart(c);
}

std::string run_section(const RunResult& run) {
  const auto& s = run.summary;
  const double target = number_or_nan(s, "trainio.workload.config.metric.au") * 100;
  std::vector<std::string> epochs;
  ChartSeries au{"AU", {}}, au_min{"lowest rank", {}}, au_max{"highest rank", {}};
  ChartSeries dlio{"DLIO's formula", {}}, exact{"exact window", {}}, read{"measured reads", {}};
  ChartSeries wait{"batch wait", {}}, compute{"compute", {}}, barrier{"barrier", {}};
  const nlohmann::json* list = node_at(s, "trainio.epochs");
  if (list && list->is_array())
    for (const auto& e : *list) {
      if (!e.is_object()) continue;
      epochs.push_back(fmt::format("{:g}", number_or_nan(e, "epoch")));
      au.values.push_back(number_or_nan(e, "train.au_percentage"));
      au_min.values.push_back(number_or_nan(e, "train.au_min_rank_percentage"));
      au_max.values.push_back(number_or_nan(e, "train.au_max_rank_percentage"));
      dlio.values.push_back(number_or_nan(e, "train.dlio_throughput_samples_per_second"));
      exact.values.push_back(number_or_nan(e, "train.throughput_samples_per_second"));
      read.values.push_back(number_or_nan(e, "train.read_bytes_per_second") / util::kMiB);
      wait.values.push_back(number_or_nan(e, "train.step_seconds_per_rank.batch_wait"));
      compute.values.push_back(number_or_nan(e, "train.step_seconds_per_rank.compute"));
      barrier.values.push_back(number_or_nan(e, "train.step_seconds_per_rank.barrier"));
    }
  const std::string verdict = text_at(s, "metric.train_au_meet_expectation");
  std::string out = fmt::format("<h2>{}: {}</h2>\n<p>{:g} rank(s) on {:g} host(s), {} to {}. AU target {:.0f}%: {}</p>\n",
                                markup_escape(run.workload), markup_escape(run.folder), number_or_nan(s, "num_accelerators"),
                                number_or_nan(s, "num_hosts"), markup_escape(run.start), markup_escape(run.end), target,
                                verdict == "success" ? R"(<span class="pass">PASS</span>)"
                                : verdict == "fail"  ? R"(<span class="fail">FAIL</span>)"
                                                     : "no verdict (see trainio.notes)");
  out += R"(<div class="charts">)";
  if (!epochs.empty()) {
    Chart c;
    c.title = "Accelerator utilisation per epoch";
    c.y_max = 100;
    c.x_label = "epoch";
    c.y_label = "AU %";
    c.categories = epochs;
    c.series = {au, au_min, au_max};
    if (std::isfinite(target)) {
      c.threshold = target;
      c.threshold_label = fmt::format("target {:.0f}%", target);
    }
    out += svg_chart(c);
    c = Chart{};
    c.title = "Training throughput per epoch";
    c.x_label = "epoch";
    c.y_label = "samples/s";
    c.categories = epochs;
    c.series = {dlio, exact};
    out += svg_chart(c);
    c.title = "Measured read bandwidth per epoch";
    c.y_label = "MiB/s";
    c.series = {read};
    out += svg_chart(c);
    c = Chart{};
    c.kind = Chart::Kind::stacked_bars;
    c.title = "Where each rank's step time went";
    c.x_label = "epoch";
    c.y_label = "seconds per rank";
    c.categories = epochs;
    c.series = {wait, compute, barrier};
    out += svg_chart(c);
    out += per_rank_chart(run);
  }
  // The latency percentiles of every epoch's training together: the population of the table
  // below, which prints the same merged histograms.
  std::string notes;
  const nlohmann::json* latency = node_at(s, "trainio.train.sample_read_seconds");
  if (latency && latency->is_object()) {
    Chart c;
    c.kind = Chart::Kind::bars;
    c.log_y = true;
    c.title = fmt::format("Training latency percentiles, whole run ({} epoch{})", epochs.size(), epochs.size() == 1 ? "" : "s");
    c.x_label = "percentile";
    c.y_label = "seconds (log)";
    c.categories = {"p50", "p90", "p99", "p99.9", "max"};
    ChartSeries sample{"sample read", {}}, batch{"batch wait", {}};
    for (const char* p : {"p50", "p90", "p99", "p99_9", "max"}) {
      sample.values.push_back(number_or_nan(s, std::string("trainio.train.sample_read_seconds.") + p));
      batch.values.push_back(number_or_nan(s, std::string("trainio.train.batch_wait_seconds.") + p));
    }
    c.series = {sample, batch};
    out += svg_chart(c);
  } else if (!epochs.empty()) {
    notes += "<p>No latency chart: this summary.json has no whole-run latency percentiles (trainio.train."
             "sample_read_seconds; written by an older trainio), and one epoch's would not be the table's.</p>\n";
  }
  if (const nlohmann::json* checkpoints = node_at(s, "trainio.checkpoint.checkpoints"); checkpoints && checkpoints->is_array() &&
                                                                                     !checkpoints->empty()) {
    // A checkpoint's duration is its slowest rank's time (MLPerf's rule). Both bars divide by it, so
    // the slowest rank's bytes, part of all ranks', can never make a taller bar than theirs.
    Chart c;
    c.kind = Chart::Kind::bars;
    c.title = "Checkpoint bandwidth (duration: the slowest rank's time)";
    c.x_label = "checkpoint";
    c.y_label = "GiB/s";
    ChartSeries all{"all ranks' bytes / duration", {}}, slowest{"slowest rank's bytes / duration", {}};
    for (const auto& k : *checkpoints) {
      c.categories.push_back(fmt::format("{} {:g}", text_at(k, "kind"), number_or_nan(k, "index")));
      all.values.push_back(number_or_nan(k, "bytes_per_second") / util::kGiB);
      slowest.values.push_back(number_or_nan(k, "slowest_rank_bytes_per_second") / util::kGiB);
    }
    c.series = {all, slowest};
    out += svg_chart(c);
  }
  out += "</div>\n" + notes;
  out += s3_table(s);
  if (const std::string table = kept_table(run); !table.empty()) out += "<pre>" + markup_escape(table) + "</pre>\n";
  return out;
}

// A sweep's chart axes. The x axis is ranks when they vary (how far the storage scales), else
// the first varied key that takes more than one value; each combination of the other varied
// keys' values is a group, drawn as its own line or bar colour, so that no line joins points of
// different configurations.
struct SweepAxes {
  std::string x_key;
  std::vector<std::string> x_values;                   // in the sweep's order
  std::vector<std::string> groups;                     // "key=value, key=value"; "" when nothing else varies
  std::vector<std::pair<std::size_t, std::size_t>> at;  // per point: (x value, group)
};

SweepAxes sweep_axes(const std::vector<SweepPointFigures>& points) {
  // The keys, as the first point names them; those that take more than one value vary.
  std::vector<std::string> keys, varying;
  if (!points.empty())
    for (const auto& kv : points.front().settings) keys.push_back(kv.first);
  const auto value_of = [](const SweepPointFigures& p, const std::string& key) {
    for (const auto& [k, v] : p.settings)
      if (k == key) return v;
    return std::string();
  };
  for (const auto& key : keys)
    if (std::any_of(points.begin(), points.end(), [&](const auto& p) { return value_of(p, key) != value_of(points.front(), key); }))
      varying.push_back(key);
  SweepAxes axes;
  const bool ranks_vary = std::find(varying.begin(), varying.end(), "ranks") != varying.end();
  axes.x_key = ranks_vary ? "ranks" : !varying.empty() ? varying.front() : !keys.empty() ? keys.front() : "point";
  const auto index_in = [](std::vector<std::string>& list, const std::string& item) {
    const auto it = std::find(list.begin(), list.end(), item);
    if (it != list.end()) return static_cast<std::size_t>(it - list.begin());
    list.push_back(item);
    return list.size() - 1;
  };
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::string group;
    for (const auto& key : varying)
      if (key != axes.x_key) group += (group.empty() ? "" : ", ") + key + "=" + value_of(points[i], key);
    const std::string x = keys.empty() ? std::to_string(i + 1) : value_of(points[i], axes.x_key);
    axes.at.emplace_back(index_in(axes.x_values, x), index_in(axes.groups, group));
  }
  return axes;
}

}  // namespace

std::string runs_html(const std::vector<RunResult>& runs) {
  std::string body;
  if (runs.size() > 1) {
    Chart au, throughput;
    au.kind = throughput.kind = Chart::Kind::bars;
    au.title = "AU of each run (mean over epochs)";
    au.y_max = 100;
    throughput.title = "Training throughput of each run";
    au.x_label = throughput.x_label = "run";
    au.y_label = "AU %";
    throughput.y_label = "samples/s";
    ChartSeries a{"AU", {}}, t{"samples/s (DLIO)", {}};
    std::vector<std::string> folders;
    for (const auto& r : runs) folders.push_back(r.folder);
    au.categories = util::without_common_folders(folders);
    for (const auto& r : runs) {
      a.values.push_back(figure_of(r, "train_au_mean_percentage").value_or(NAN));
      t.values.push_back(figure_of(r, "train_throughput_mean_samples_per_second").value_or(NAN));
    }
    throughput.categories = au.categories;
    au.series = {a};
    throughput.series = {t};
    body += "<h2>The runs side by side</h2>\n<div class=\"charts\">" + svg_chart(au) + svg_chart(throughput) + "</div>\n";
  }
  for (const auto& r : runs) body += run_section(r);
  return page(runs.size() == 1 ? "trainio: " + runs.front().workload : fmt::format("trainio: {} runs", runs.size()), body);
}

std::string sweep_html(const std::string& title, const std::vector<SweepPointFigures>& points, double au_target_percent) {
  const SweepAxes axes = sweep_axes(points);
  Chart au, throughput, read;
  au.kind = Chart::Kind::lines;
  au.title = "AU against " + axes.x_key;
  au.y_max = 100;
  au.y_label = "AU %";
  throughput.title = "Training throughput against " + axes.x_key;
  throughput.y_label = "samples/s";
  read.title = "Measured read bandwidth against " + axes.x_key;
  read.y_label = "MiB/s";
  au.x_label = throughput.x_label = read.x_label = axes.x_key;
  au.categories = throughput.categories = read.categories = axes.x_values;
  // Per group: its AU mean (a line), its lowest epoch (dashed, same colour), and a bar colour.
  const auto named = [](const char* figure, const std::string& group) {
    return group.empty() ? std::string(figure) : fmt::format("{} ({})", figure, group);
  };
  const std::vector<double> none(axes.x_values.size(), NAN);
  for (std::size_t g = 0; g < axes.groups.size(); ++g) {
    const int colour = static_cast<int>(g);
    au.series.push_back({named("AU mean", axes.groups[g]), none, colour, false});
    au.series.push_back({named("lowest epoch", axes.groups[g]), none, colour, true});
    throughput.series.push_back({named("samples/s", axes.groups[g]), none, colour, false});
    read.series.push_back({named("read MiB/s", axes.groups[g]), none, colour, false});
  }
  std::string rows;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const auto [x, g] = axes.at[i];
    au.series[2 * g].values[x] = p.au_mean;
    au.series[2 * g + 1].values[x] = p.au_min;
    throughput.series[g].values[x] = p.samples_per_second;
    read.series[g].values[x] = p.read_mib_per_second;
    const auto cell = [](double v) { return std::isfinite(v) ? fmt::format("{:.2f}", v) : std::string("-"); };
    rows += fmt::format("<tr><td>{}</td><td style=\"text-align:left\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                        "<td class=\"{}\">{}</td></tr>\n",
                        i + 1, markup_escape(p.name), cell(p.au_mean), cell(p.au_min), cell(p.samples_per_second),
                        cell(p.read_mib_per_second), p.verdict == "pass" ? "pass" : "fail", markup_escape(p.verdict));
  }
  au.threshold = au_target_percent;
  au.threshold_label = fmt::format("target {:.0f}%", au_target_percent);
  throughput.kind = read.kind = Chart::Kind::bars;
  const std::string body =
      R"(<div class="charts">)" + svg_chart(au) + svg_chart(throughput) + svg_chart(read) + "</div>\n" +
      "<h2>Points</h2>\n<table><tr><th>#</th><th>point</th><th>AU mean %</th><th>lowest epoch AU %</th><th>samples/s</th>"
      "<th>read MiB/s</th><th>verdict</th></tr>\n" +
      rows + "</table>\n";
  return page(title, body);
}

}  // namespace trainio::report
