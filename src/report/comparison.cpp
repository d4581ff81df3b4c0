#include "report/comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "config/suggest.hpp"
#include "util/clock.hpp"
#include "report/markup.hpp"
#include "util/error.hpp"

namespace trainio::report {

namespace {

using Verdict = FigureComparison::Verdict;

std::string change_text(const FigureComparison& f) {
  if (!f.relative) return f.candidate_median == f.baseline_median ? "+0.00%" : "n/a";
  return fmt::format("{:+.2f}%", f.change * 100);
}

// Four decimals; below 0.0001 two significant digits, so a small p never reads as 0.
std::string p_text(const FigureComparison& f) {
  if (!f.test) return "-";
  return f.test->p >= 1e-4 ? fmt::format("{:.4f}", f.test->p) : fmt::format("{:.1e}", f.test->p);
}

// A figure name on the command line must be a known figure or a dotted path into summary.json.
void check_figure_name(const std::string& name) {
  if (find_figure(name) || name.find('.') != std::string::npos) return;
  std::vector<std::string> known;
  for (const auto& f : known_figures()) known.push_back(f.name);
  const std::string near = config::closest(name, known);
  throw usage_error(fmt::format("unknown figure '{}'{}", name, near.empty() ? "" : "; did you mean '" + near + "'?"),
                    "trainio compare --help lists the known figures; a dotted path into summary.json also works "
                    "(metric.train_au_mean_percentage)");
}

// Leaves of a JSON tree as "a.b.c" -> value text.
void flatten(const nlohmann::json& node, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (node.is_object()) {
    for (const auto& [k, v] : node.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  out[prefix] = node.dump();
}

// Keys whose difference says nothing about the configuration: where files went, and seeds.
bool incidental_key(const std::string& key) {
  return key.find("folder") != std::string::npos || key.find("seed") != std::string::npos ||
         key.find("log_file") != std::string::npos;
}

std::vector<std::string> config_differences(const RunResult& baseline, const RunResult& candidate) {
  std::map<std::string, std::string> a, b;
  if (const auto* node = node_at(baseline.summary, "trainio.workload.config")) flatten(*node, "", a);
  if (const auto* node = node_at(candidate.summary, "trainio.workload.config")) flatten(*node, "", b);
  std::vector<std::string> out;
  for (const auto& [key, value] : a) {
    if (incidental_key(key)) continue;
    const auto it = b.find(key);
    if (it == b.end()) out.push_back(fmt::format("{}: {} -> (absent)", key, value));
    else if (it->second != value) out.push_back(fmt::format("{}: {} -> {}", key, value, it->second));
  }
  for (const auto& [key, value] : b)
    if (!incidental_key(key) && !a.count(key)) out.push_back(fmt::format("{}: (absent) -> {}", key, value));
  return out;
}

std::string config_line(const Comparison& c) {
  if (c.config_differences.empty()) return {};
  constexpr std::size_t kShown = 12;
  std::string out = fmt::format("configurations differ ({} key{}):", c.config_differences.size(),
                                c.config_differences.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < c.config_differences.size() && i < kShown; ++i) out += " " + c.config_differences[i] + ";";
  if (c.config_differences.size() > kShown) out += fmt::format(" and {} more", c.config_differences.size() - kShown);
  return out;
}

// How the p-values were found; and when these counts cannot give p < alpha however far apart the
// runs are, the fewest that can. Both come from the exact test's smallest p, 2 / C(nb + nc, nb),
// which no p-value the test gives is below, so the note and the verdicts cannot disagree.
std::vector<std::string> u_test_notes(std::size_t nb, std::size_t nc, double alpha) {
  std::vector<std::string> out;
  const double splits = metrics::u_splits(nb, nc);
  if (splits <= metrics::kExactUSplits)
    out.push_back(fmt::format("p: two-sided Mann-Whitney U test, exact (every one of the C({}, {}) = {:.0f} ways to split "
                              "the runs into {} and {})",
                              nb + nc, nb, splits, nb, nc));
  else
    out.push_back(fmt::format("p: two-sided Mann-Whitney U test, normal approximation with tie and continuity corrections "
                              "(C({}, {}) = {:.3g} ways to split the runs, more than the {:.0f} that are enumerated)",
                              nb + nc, nb, splits, metrics::kExactUSplits));
  const double smallest = metrics::smallest_u_p(nb, nc);
  if (smallest < alpha) return out;
  constexpr std::size_t kMostRuns = 1000;  // a search bound for absurdly small alphas
  std::size_t n = kMinRunsForTest, m = nc;
  while (n < kMostRuns && metrics::smallest_u_p(n, n) >= alpha) ++n;
  while (m < kMostRuns && metrics::smallest_u_p(nb, m) >= alpha) ++m;
  std::string fewest = fmt::format("{} against {}", n, n);
  if (m < kMostRuns && (nb != n || m != n)) fewest += fmt::format(", or {} against {}", nb, m);
  out.push_back(fmt::format("{} vs {} runs cannot reach p < {} however far apart they are (the smallest two-sided p "
                            "for {} vs {} runs is {:.4g}), so no change can be a regression or an improvement: use "
                            "more runs ({})",
                            nb, nc, alpha, nb, nc, smallest, n < kMostRuns ? fewest : "many more"));
  return out;
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::same: return "same";
    case Verdict::improved: return "improved";
    case Verdict::regressed: return "REGRESSION";
    case Verdict::not_significant: return "not significant";
    case Verdict::changed: return "changed (not judged)";
  }
  return "?";
}

bool Comparison::regression() const {
  return std::any_of(figures.begin(), figures.end(), [](const auto& f) { return f.verdict == Verdict::regressed; });
}

Comparison compare_runs(const std::vector<RunResult>& baseline, const std::vector<RunResult>& candidate,
                        const std::vector<std::string>& names, const Thresholds& thresholds, double alpha) {
  for (const auto& name : names) check_figure_name(name);
  for (const auto& [name, value] : thresholds.per_figure) check_figure_name(name);
  Comparison c;
  c.threshold = thresholds.all;
  c.alpha = alpha;
  if (!baseline.empty() && !candidate.empty()) c.config_differences = config_differences(baseline.front(), candidate.front());
  std::vector<double> durations;
  for (const auto& r : candidate) durations.push_back(util::seconds_between(r.start, r.end));
  if (!durations.empty()) c.candidate_seconds = metrics::median_of(durations);
  std::vector<std::string> wanted = names;
  const bool chosen = !names.empty();
  if (!chosen)
    for (const auto& f : known_figures())
      if (f.stable) wanted.push_back(f.name);
  for (const auto& name : wanted) {
    FigureComparison f;
    f.name = name;
    f.higher_is_better = higher_is_better(name);
    f.threshold = thresholds.of(name);
    const double threshold = f.threshold;
    if (const Figure* known = find_figure(name)) {
      f.unit = known->unit;
      f.judged = known->judged;
    }
    for (const auto& r : baseline)
      if (auto v = figure_of(r, name)) f.baseline.push_back(*v);
    for (const auto& r : candidate)
      if (auto v = figure_of(r, name)) f.candidate.push_back(*v);
    if (f.baseline.size() != baseline.size() || f.candidate.size() != candidate.size()) {
      if (chosen)
        throw usage_error(fmt::format("figure '{}' is missing from {} of the runs", name,
                                      f.baseline.size() != baseline.size() ? "some baseline" : "some candidate"),
                          "name a figure every run has: trainio compare --help lists the known ones; a dotted path "
                          "into summary.json also works (metric.train_au_mean_percentage)");
      // Measured on neither side: not this kind of run. On some runs only: say so.
      if (!f.baseline.empty() || !f.candidate.empty())
        c.notes.push_back(fmt::format("{} is missing from {} of {} baseline and {} of {} candidate runs: not compared",
                                      name, baseline.size() - f.baseline.size(), baseline.size(),
                                      candidate.size() - f.candidate.size(), candidate.size()));
      continue;
    }
    f.baseline_median = metrics::median_of(f.baseline);
    f.candidate_median = metrics::median_of(f.candidate);
    // Relative to the baseline's size, so a negative baseline keeps the direction. From a zero
    // baseline any change is beyond the threshold, and its size is not a percentage.
    const double delta = f.candidate_median - f.baseline_median;
    f.relative = f.baseline_median != 0;
    f.change = f.relative ? delta / std::abs(f.baseline_median) : 0;
    const double beyond = f.relative ? std::abs(f.change) : (delta != 0 ? HUGE_VAL : 0);
    const bool up = delta > 0;
    const bool worse = f.judged && beyond > threshold && up != f.higher_is_better;
    const bool better = f.judged && beyond > threshold && up == f.higher_is_better;
    if (f.baseline.size() >= kMinRunsForTest && f.candidate.size() >= kMinRunsForTest) {
      f.test = metrics::mann_whitney_u(f.baseline, f.candidate);
      const bool significant = f.test->p < alpha;  // the rule docs/results.md and --help state
      f.verdict = (worse || better) ? (significant ? (worse ? Verdict::regressed : Verdict::improved) : Verdict::not_significant)
                                    : Verdict::same;
    } else {
      f.verdict = worse ? Verdict::regressed : better ? Verdict::improved : Verdict::same;
    }
    if (!f.judged && beyond > threshold) f.verdict = Verdict::changed;
    c.figures.push_back(std::move(f));
  }
  if (c.figures.empty())
    throw usage_error("the two sides have no figure in common", "compare runs of the same kind (training with training, "
                                                                 "checkpointing with checkpointing)");
  const std::size_t nb = baseline.size(), nc = candidate.size();
  if (nb < kMinRunsForTest || nc < kMinRunsForTest)
    c.notes.push_back(fmt::format("{} vs {} runs: the threshold alone decides; with {} or more runs a side a "
                                  "Mann-Whitney U test also asks for significance",
                                  nb, nc, kMinRunsForTest));
  else
    for (auto& note : u_test_notes(nb, nc, alpha)) c.notes.push_back(std::move(note));
  return c;
}

std::string comparison_text(const Comparison& c) {
  std::string out;
  if (const std::string differ = config_line(c); !differ.empty()) out += differ + "\n";
  out += fmt::format("  {:<42} {:>16} {:>16} {:>9} {:>9} {:>8}  {}\n", "figure", "baseline", "candidate", "change",
                     "threshold", "p", "verdict");
  for (const auto& f : c.figures)
    out += fmt::format("  {:<42} {:>16} {:>16} {:>9} {:>8.1f}% {:>8}  {}\n", f.name, figure_text(f.baseline_median, f.unit),
                       figure_text(f.candidate_median, f.unit), change_text(f), f.threshold * 100, p_text(f),
                       verdict_name(f.verdict));
  out += fmt::format("threshold {:.1f}% (unless a figure has its own), alpha {}: {}\n", c.threshold * 100, c.alpha,
                     c.regression() ? "REGRESSION" : "no regression");
  for (const auto& n : c.notes) out += "note: " + n + "\n";
  return out;
}

std::string comparison_markdown(const Comparison& c) {
  std::string out;
  if (const std::string differ = config_line(c); !differ.empty()) out += "**" + differ + "**\n\n";
  out += "| figure | baseline | candidate | change | threshold | p | verdict |\n|---|---:|---:|---:|---:|---:|---|\n";
  for (const auto& f : c.figures)
    out += fmt::format("| `{}` | {} | {} | {} | {:.1f}% | {} | {} |\n", f.name, figure_text(f.baseline_median, f.unit),
                       figure_text(f.candidate_median, f.unit), change_text(f), f.threshold * 100, p_text(f),
                       f.verdict == Verdict::regressed ? "**REGRESSION**" : verdict_name(f.verdict));
  out += fmt::format("\nThreshold {:.1f}%, alpha {}: **{}**.\n", c.threshold * 100, c.alpha,
                     c.regression() ? "regression" : "no regression");
  for (const auto& n : c.notes) out += "\n_" + n + "_\n";
  return out;
}

std::string comparison_junit(const Comparison& c) {
  std::size_t failures = 0;
  for (const auto& f : c.figures) failures += f.verdict == Verdict::regressed;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"trainio compare\" tests=\"{}\" failures=\"{}\">\n", c.figures.size(), failures);
  out += fmt::format("  <testsuite name=\"trainio compare\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n",
                     c.figures.size(), failures, c.candidate_seconds);
  if (!c.config_differences.empty())
    out += fmt::format("    <properties><property name=\"configurations differ\" value=\"{}\"/></properties>\n",
                       markup_escape(config_line(c)));
  for (const auto& f : c.figures) {
    const std::string detail = fmt::format("baseline {} candidate {} change {} p {} ({})", figure_text(f.baseline_median, f.unit),
                                           figure_text(f.candidate_median, f.unit), change_text(f), p_text(f), verdict_name(f.verdict));
    // time: how long the candidate ran, the figure's measurement (CI systems chart it per case).
    out += fmt::format("    <testcase classname=\"trainio.compare\" name=\"{}\" time=\"{:.3f}\">\n", markup_escape(f.name),
                       c.candidate_seconds);
    out += "      <properties>\n";
    for (const auto& [key, value] : std::vector<std::pair<const char*, std::string>>{
             {"baseline", figure_text(f.baseline_median, f.unit)},
             {"candidate", figure_text(f.candidate_median, f.unit)},
             {"change", change_text(f)},
             {"threshold", fmt::format("{:.1f}%", f.threshold * 100)},
             {"p", p_text(f)},
             {"p_method", !f.test ? "-" : f.test->exact ? "exact" : "normal approximation"},
             {"verdict", verdict_name(f.verdict)}})
      out += fmt::format("        <property name=\"{}\" value=\"{}\"/>\n", key, markup_escape(value));
    out += "      </properties>\n";
    if (f.verdict == Verdict::regressed)
      out += fmt::format("      <failure message=\"{}\">{}</failure>\n", markup_escape(detail), markup_escape(detail));
    else
      out += fmt::format("      <system-out>{}</system-out>\n", markup_escape(detail));
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace trainio::report
