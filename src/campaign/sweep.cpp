#include "campaign/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "campaign/job.hpp"
#include "campaign/outcome.hpp"
#include "config/load.hpp"
#include "engine/preflight.hpp"
#include "metrics/statistics.hpp"
#include "metrics/summary.hpp"
#include "report/html_report.hpp"
#include "storage/fs.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"
#include "util/redact.hpp"

namespace trainio::campaign {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  if (!text.empty() && text.back() == ',') out.push_back("");
  return out;
}

// A value as a folder-name part: no slashes or spaces.
std::string folder_safe(std::string text) {
  std::replace_if(text.begin(), text.end(), [](char c) { return c == '/' || c == ' ' || c == '\t'; }, '_');
  return text;
}

std::vector<std::string> overrides_of(const SweepPoint& p) {
  std::vector<std::string> out;
  for (const auto& [key, value] : p.values) out.push_back(key + "=" + value);
  return out;
}

// What a point's runs showed: their figures only, not their summaries, so that a sweep of many
// runs holds little.
struct PointRuns {
  const SweepPoint* point = nullptr;
  std::vector<RunFigures> finished;
  int failed = 0;
};

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}


// What a point's runs showed: AU (mean of the runs' means; the lowest epoch of any run),
// samples/s (mean; spread (max - min) / mean over the repeats), measured read MiB/s (mean), and
// pass when every run finished and met the AU target.
struct PointFigures {
  report::SweepPointFigures figures;
  double samples_spread = NAN;
};
PointFigures point_figures(const PointRuns& p) {
  std::vector<double> au, au_lowest, samples, read;
  bool all_pass = p.failed == 0 && !p.finished.empty(), any_fail = false, unknown = false;
  for (const RunFigures& f : p.finished) {
    if (f.au_mean) au.push_back(*f.au_mean);
    if (f.au_lowest_epoch) au_lowest.push_back(*f.au_lowest_epoch);
    if (f.samples_per_second) samples.push_back(*f.samples_per_second);
    if (f.read_bytes_per_second) read.push_back(*f.read_bytes_per_second / (1024.0 * 1024.0));
    all_pass = all_pass && f.verdict == "pass";
    any_fail = any_fail || f.verdict == "fail";
    unknown = unknown || f.verdict == "unknown";
  }
  const auto mean = [](const std::vector<double>& v) { return v.empty() ? NAN : metrics::mean_of(v); };
  PointFigures out;
  out.figures.name = p.point->name;
  out.figures.settings.emplace_back("ranks", std::to_string(p.point->ranks));
  for (const auto& kv : p.point->values) out.figures.settings.push_back(kv);
  out.figures.au_mean = mean(au);
  out.figures.au_min = au_lowest.empty() ? NAN : *std::min_element(au_lowest.begin(), au_lowest.end());
  out.figures.samples_per_second = mean(samples);
  out.figures.read_mib_per_second = mean(read);
  out.figures.verdict = p.failed > 0 ? "failed runs" : all_pass ? "pass" : any_fail ? "fail" : unknown ? "unknown" : "";
  if (const auto spread = metrics::spread_of(samples)) out.samples_spread = *spread * 100;
  return out;
}

std::string number(double v, const char* spec = "{:.2f}") {
  return std::isfinite(v) ? fmt::format(fmt::runtime(spec), v) : std::string();
}

// A row per point: its values, ranks, how many runs finished and failed, and its figures.
std::string sweep_csv(const SweepSpec& spec, const std::vector<PointRuns>& points) {
  std::string out = "point";
  for (const auto& [key, values] : spec.vary) out.append(",").append(csv_field(key));
  out += ",ranks,runs_finished,runs_failed,au_mean_percent,au_min_percent,samples_per_second_mean,"
         "samples_per_second_spread_percent,read_MiB_per_second_mean,verdict\n";
  for (const auto& p : points) {
    const PointFigures f = point_figures(p);
    out += csv_field(p.point->name);
    for (const auto& [key, value] : p.point->values) out.append(",").append(csv_field(value));
    out += fmt::format(",{},{},{},{},{},{},{},{},{}\n", p.point->ranks, p.finished.size(), p.failed,
                       number(f.figures.au_mean), number(f.figures.au_min), number(f.figures.samples_per_second, "{:.1f}"),
                       number(f.samples_spread), number(f.figures.read_mib_per_second, "{:.1f}"), f.figures.verdict);
  }
  return out;
}

}  // namespace

std::pair<std::string, std::vector<std::string>> parse_vary(const std::string& text) {
  const auto eq = text.find('=');
  const std::string key = eq == std::string::npos ? "" : text.substr(0, eq);
  std::vector<std::string> values = eq == std::string::npos ? std::vector<std::string>{} : split_list(text.substr(eq + 1));
  const bool empty_value = std::any_of(values.begin(), values.end(), [](const std::string& v) { return v.empty(); });
  if (key.empty() || values.empty() || empty_value)
    throw usage_error(fmt::format("--vary '{}' is not KEY=V1,V2,...", util::redact(text)),
                      "for example --vary reader.read_threads=1,2,4");
  // Each value names a point's folder and its sweep.csv row: a secret would be written there.
  if (util::is_secret_key(key))
    throw usage_error(fmt::format("--vary '{}': {} holds a secret, which a sweep cannot vary", util::redact(text), key),
                      fmt::format("give {} once, as an override shared by every point", key));
  return {key, values};
}

std::vector<int> parse_ranks(const std::string& text) {
  std::vector<int> out;
  const std::vector<std::string> items = split_list(text);
  for (const auto& item : items.empty() ? std::vector<std::string>{""} : items) {
    std::size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || n < 1)
      throw usage_error(fmt::format("--ranks '{}' is not a list of whole numbers of 1 or more", text),
                        "for example --ranks 1,2,4,8");
    out.push_back(n);
  }
  return out;
}

std::vector<SweepPoint> sweep_points(const SweepSpec& spec) {
  std::vector<SweepPoint> points;
  std::vector<std::size_t> at(spec.vary.size(), 0);
  for (const int ranks : spec.ranks) {
    std::fill(at.begin(), at.end(), 0);
    while (true) {
      SweepPoint p;
      p.ranks = ranks;
      p.name = fmt::format("ranks={}", ranks);
      for (std::size_t k = 0; k < spec.vary.size(); ++k) {
        p.values.emplace_back(spec.vary[k].first, spec.vary[k].second[at[k]]);
        p.name += "," + spec.vary[k].first + "=" + folder_safe(spec.vary[k].second[at[k]]);
      }
      points.push_back(std::move(p));
      // The next combination, the last key changing fastest.
      std::size_t k = spec.vary.size();
      while (k > 0 && ++at[k - 1] == spec.vary[k - 1].second.size()) at[--k] = 0;
      if (k == 0) break;
    }
  }
  return points;
}

int run_sweep(const SweepSpec& spec) {
  const std::vector<SweepPoint> points = sweep_points(spec);
  // Every point's workload loads and is planned for its ranks, before anything runs: a typo or a
  // batch too large for the dataset found after hours is hours lost.
  const config::SplitArgs base = config::split_args(spec.words);
  const config::Workload w = config::load(base.workload, base.overrides);
  for (const auto& p : points) {
    std::vector<std::string> overrides = base.overrides;
    for (const auto& o : overrides_of(p)) overrides.push_back(o);
    try {
      engine::preflight(config::load(base.workload, overrides), p.ranks, false);
    } catch (const Error& e) {
      throw Error(e.kind(), fmt::format("sweep point '{}': {}", p.name, e.what()), e.hint());
    }
  }
  claim_folder(spec.output, "sweep", spec.words);
  const std::size_t jobs = points.size() * static_cast<std::size_t>(spec.repeat);
  std::printf("sweep: %zu points x %d runs = %zu jobs into %s (launcher: %s)\n", points.size(), spec.repeat, jobs,
              spec.output.c_str(), spec.launcher.c_str());
  std::vector<PointRuns> results;
  std::size_t index = 0;
  int failed = 0;
  for (const auto& p : points) {
    PointRuns runs;
    runs.point = &p;
    for (int r = 1; r <= spec.repeat; ++r) {
      Job job;
      job.ranks = p.ranks;
      job.run_words = spec.words;
      for (const auto& o : overrides_of(p)) job.run_words.push_back(o);
      job.folder = util::join(util::join(spec.output, p.name), fmt::format("run{}", r));
      std::printf("[%zu/%zu] %s run %d: ", ++index, jobs, p.name.c_str(), r);
      std::fflush(stdout);
      JobOutcome outcome = run_job(job, spec.launcher);
      std::printf("%s\n", outcome_line(outcome).c_str());
      std::fflush(stdout);
      if (outcome.result) {
        runs.finished.push_back(figures_of(*outcome.result));
      } else {
        ++runs.failed;
        ++failed;
      }
    }
    results.push_back(std::move(runs));
  }
  const std::string csv = util::join(spec.output, "sweep.csv");
  storage::write_file_atomic(csv, sweep_csv(spec, results));
  std::vector<report::SweepPointFigures> figures;
  for (const auto& p : results) figures.push_back(point_figures(p).figures);
  storage::write_file_atomic(util::join(spec.output, "report.html"),
                             report::sweep_html(fmt::format("trainio sweep of {} ({})", w.name, spec.output), figures,
                                                w.metric.au * 100));
  std::printf("results: %s and report.html beside it%s\n", csv.c_str(),
              failed ? fmt::format(" ({} of {} runs failed; rerun the same command to retry them)", failed, jobs).c_str()
                     : "");
  return failed ? 1 : 0;
}

}  // namespace trainio::campaign
