#pragma once
// `trainio report`: one run's table, or, for several runs of one workload, MLPerf Storage's view:
// the mean of the runs with its spread, flagged when runs differ by more than 5%; with --mlperf,
// the submission checks (a warm-up and 5 runs, one after the other, each passing AU, within 5%,
// each with its own seed, all of one configuration, each an MLPerf benchmark whose resolved values
// differ from MLPerf's own only where the CLOSED or OPEN division allows).

#include <optional>
#include <string>
#include <vector>

#include "report/run_results.hpp"

namespace trainio::report {

struct FigureStats {
  std::string name, unit;
  std::vector<double> values;  // per run, in run order
  double mean = 0;
  // None for one run (it says nothing of how runs vary); cv and spread also for a zero mean.
  std::optional<double> stdev, cv, spread;
  std::optional<bool> within_5_percent;  // spread <= 5%; none without a spread
};

struct Aggregate {
  std::string workload;
  // The configuration's identity: a hash of what the runs measured (resolved workload less the
  // seed, where results go and whether data was generated first; ranks; hosts). Runs of different
  // configurations are never aggregated together.
  std::string configuration;
  std::vector<std::string> distinguished_by;  // "key=value" setting it apart from the other groups
  std::vector<std::string> runs;  // folders aggregated, in start order
  std::string warmup;             // --mlperf: the first run, left out
  std::vector<FigureStats> figures;
  bool mlperf = false;
  std::string division;               // --mlperf: "closed", "open" or "none", from the runs' resolved workloads
  std::vector<std::string> problems;  // --mlperf checks that failed; also mixed workloads
  std::vector<std::string> notes;     // worth knowing, not failures
  std::vector<std::string> missing;   // figures some runs have and others lack
};

// Runs are ordered by start time. Throws a usage error when --mlperf has too few runs. --mlperf
// judges the runs as one submission: a mix of configurations is one of its failures.
Aggregate aggregate_runs(const std::vector<RunResult>& runs, bool mlperf);
// Without --mlperf: the runs grouped by configuration, each group aggregated on its own, in the
// order of their first runs' start.
std::vector<Aggregate> aggregate_by_configuration(const std::vector<RunResult>& runs);
// One aggregate as the table; several with a line saying how they differ before each.
std::string aggregate_text(const std::vector<Aggregate>& groups);
// One aggregate as its object; several as {"configurations": [...]} (no figures at the top, so
// a reader expecting one configuration fails instead of taking the first).
std::string aggregate_json(const std::vector<Aggregate>& groups);

// One run, as the end-of-run table shows it.
std::string run_text(const RunResult& run);

}  // namespace trainio::report
