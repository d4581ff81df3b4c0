#include "report/comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace trainio::report {

namespace {

using Verdict = FigureComparison::Verdict;

std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string change_text(const FigureComparison& f) {
  if (!f.relative) return f.candidate_median == f.baseline_median ? "+0.00%" : "n/a";
  return fmt::format("{:+.2f}%", f.change * 100);
}

std::string p_text(const FigureComparison& f) {
  return f.test ? fmt::format("{:.4f}", f.test->p) : std::string("-");
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::same: return "same";
    case Verdict::improved: return "improved";
    case Verdict::regressed: return "REGRESSION";
    case Verdict::not_significant: return "not significant";
  }
  return "?";
}

bool Comparison::regression() const {
  return std::any_of(figures.begin(), figures.end(), [](const auto& f) { return f.verdict == Verdict::regressed; });
}

Comparison compare_runs(const std::vector<RunResult>& baseline, const std::vector<RunResult>& candidate,
                        const std::vector<std::string>& names, double threshold, double alpha) {
  Comparison c;
  c.threshold = threshold;
  c.alpha = alpha;
  std::vector<std::string> wanted = names;
  const bool chosen = !names.empty();
  if (!chosen)
    for (const auto& f : known_figures()) wanted.push_back(f.name);
  for (const auto& name : wanted) {
    FigureComparison f;
    f.name = name;
    f.higher_is_better = higher_is_better(name);
    for (const auto& k : known_figures())
      if (name == k.name) f.unit = k.unit;
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
    const bool worse = beyond > threshold && up != f.higher_is_better;
    const bool better = beyond > threshold && up == f.higher_is_better;
    if (f.baseline.size() >= kMinRunsForTest && f.candidate.size() >= kMinRunsForTest) {
      f.test = metrics::mann_whitney_u(f.baseline, f.candidate);
      const bool significant = f.test->p < alpha;
      f.verdict = (worse || better) ? (significant ? (worse ? Verdict::regressed : Verdict::improved) : Verdict::not_significant)
                                    : Verdict::same;
    } else {
      f.verdict = worse ? Verdict::regressed : better ? Verdict::improved : Verdict::same;
    }
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
  else {
    // The smallest p-value these counts allow: the two sets completely apart.
    std::vector<double> low, high;
    for (std::size_t i = 0; i < nb; ++i) low.push_back(static_cast<double>(i));
    for (std::size_t i = 0; i < nc; ++i) high.push_back(static_cast<double>(nb + i));
    if (metrics::mann_whitney_u(low, high).p >= alpha)
      c.notes.push_back(fmt::format("{} vs {} runs cannot reach p < {} however far apart they are: use more runs "
                                    "(4 against 4, or 3 against 5)",
                                    nb, nc, alpha));
  }
  return c;
}

std::string comparison_text(const Comparison& c) {
  std::string out = fmt::format("  {:<42} {:>16} {:>16} {:>9} {:>8}  {}\n", "figure", "baseline", "candidate", "change",
                                "p", "verdict");
  for (const auto& f : c.figures)
    out += fmt::format("  {:<42} {:>16} {:>16} {:>9} {:>8}  {}\n", f.name, figure_text(f.baseline_median, f.unit),
                       figure_text(f.candidate_median, f.unit), change_text(f), p_text(f), verdict_name(f.verdict));
  out += fmt::format("threshold {:.1f}%, alpha {}: {}\n", c.threshold * 100, c.alpha,
                     c.regression() ? "REGRESSION" : "no regression");
  for (const auto& n : c.notes) out += "note: " + n + "\n";
  return out;
}

std::string comparison_markdown(const Comparison& c) {
  std::string out = "| figure | baseline | candidate | change | p | verdict |\n|---|---:|---:|---:|---:|---|\n";
  for (const auto& f : c.figures)
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", f.name, figure_text(f.baseline_median, f.unit),
                       figure_text(f.candidate_median, f.unit), change_text(f), p_text(f),
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
  out += fmt::format("  <testsuite name=\"trainio compare\" tests=\"{}\" failures=\"{}\">\n", c.figures.size(), failures);
  for (const auto& f : c.figures) {
    const std::string detail = fmt::format("baseline {} candidate {} change {} p {} ({})", figure_text(f.baseline_median, f.unit),
                                           figure_text(f.candidate_median, f.unit), change_text(f), p_text(f), verdict_name(f.verdict));
    out += fmt::format("    <testcase classname=\"trainio.compare\" name=\"{}\">\n", xml_escape(f.name));
    if (f.verdict == Verdict::regressed)
      out += fmt::format("      <failure message=\"{}\">{}</failure>\n", xml_escape(detail), xml_escape(detail));
    else
      out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(detail));
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace trainio::report
