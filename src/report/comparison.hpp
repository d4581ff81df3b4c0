#pragma once
// `trainio compare`: a baseline and a candidate (each one run or a set of runs), figure by figure:
// medians, the change, and a verdict. A change beyond the threshold in the worse direction is a
// regression; with at least 3 runs a side it must also be significant: the two-sided
// Mann-Whitney U test's p < `alpha` (the test Google Benchmark's compare.py uses; its p exact for
// small samples, ties included). Text, Markdown and JUnit XML renderings, so CI systems show it
// natively.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "metrics/statistics.hpp"
#include "report/run_results.hpp"

namespace trainio::report {

struct FigureComparison {
  std::string name, unit;
  bool higher_is_better = true;
  bool judged = true;     // false: a change is reported, never a regression or an improvement
  double threshold = 0.05;
  std::vector<double> baseline, candidate;
  double baseline_median = 0, candidate_median = 0;
  double change = 0;      // (candidate - baseline) / |baseline|
  bool relative = true;   // false for a zero baseline: `change` has no meaning
  std::optional<metrics::UTest> test;
  enum class Verdict { same, improved, regressed, not_significant, changed };
  Verdict verdict = Verdict::same;
};

struct Comparison {
  std::vector<FigureComparison> figures;
  double threshold = 0.05;  // for figures without their own
  double alpha = 0.05;
  bool regression() const;
  // Resolved workload keys whose values differ between the first baseline and the first candidate
  // run ("reader.read_threads: 4 -> 8"); folders and seeds left out.
  std::vector<std::string> config_differences;
  double candidate_seconds = 0;  // the candidate runs' median duration
  std::vector<std::string> notes;
};

// The smallest change that counts: one for every figure, and per figure where given.
struct Thresholds {
  double all = 0.05;
  std::map<std::string, double> per_figure;
  double of(const std::string& figure) const {
    const auto it = per_figure.find(figure);
    return it == per_figure.end() ? all : it->second;
  }
};

inline constexpr std::size_t kMinRunsForTest = 3;

// `names` empty: every stable known figure measured on both sides. Throws a usage error for a
// named figure missing on a side, or unknown (a name that is neither a known figure nor a dotted
// path into summary.json), with the nearest known name.
Comparison compare_runs(const std::vector<RunResult>& baseline, const std::vector<RunResult>& candidate,
                        const std::vector<std::string>& names, const Thresholds& thresholds, double alpha);

std::string comparison_text(const Comparison& c);
std::string comparison_markdown(const Comparison& c);
std::string comparison_junit(const Comparison& c);
const char* verdict_name(FigureComparison::Verdict v);

}  // namespace trainio::report
