#include "campaign/outcome.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/units.hpp"

namespace trainio::campaign {

RunFigures figures_of(const report::RunResult& run) {
  RunFigures f;
  f.au_mean = report::figure_of(run, "train_au_mean_percentage");
  if (const auto* list = report::node_at(run.summary, "metric.train_au_percentage"); list && list->is_array())
    for (const auto& v : *list)
      if (v.is_number()) f.au_lowest_epoch = std::min(f.au_lowest_epoch.value_or(v.get<double>()), v.get<double>());
  f.samples_per_second = report::figure_of(run, "train_throughput_mean_samples_per_second");
  f.read_bytes_per_second = report::figure_of(run, "read_bytes_per_second");
  const std::string verdict = report::text_at(run.summary, "metric.train_au_meet_expectation");
  f.verdict = verdict == "success" ? "pass" : verdict == "fail" ? "fail" : "unknown";
  return f;
}

std::string outcome_line(const JobOutcome& outcome) {
  if (!outcome.result) {
    if (outcome.exit_code == 0) return fmt::format("FAILED: it wrote no summary.json (see {})", outcome.log);
    return fmt::format("FAILED (exit {}): see {}", outcome.exit_code, outcome.log);
  }
  const RunFigures f = figures_of(*outcome.result);
  std::string line = f.au_mean ? fmt::format("AU {:.1f}% {}", *f.au_mean,
                                             f.verdict == "pass" ? "PASS" : f.verdict == "fail" ? "FAIL" : "(no verdict)")
                               : std::string("AU -");
  if (f.samples_per_second) line += fmt::format("  {:.1f} samples/s", *f.samples_per_second);
  if (f.read_bytes_per_second) line += "  read " + util::format_rate(*f.read_bytes_per_second);
  if (outcome.kept) line += "  (finished earlier, kept)";
  return line;
}

}  // namespace trainio::campaign
