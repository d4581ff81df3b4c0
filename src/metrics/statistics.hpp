#pragma once
// Statistics over repeated runs: central values and spread, and the Mann-Whitney U test that
// decides whether two sets of runs differ (as Google Benchmark's compare.py uses it).

#include <vector>

namespace trainio::metrics {

double median_of(std::vector<double> v);
// Coefficient of variation: population stdev / mean (0 for an empty list or a zero mean).
double cv_of(const std::vector<double>& v);
// (max - min) / mean: how far apart the runs are (MLPerf wants runs within 5%).
double spread_of(const std::vector<double>& v);

struct UTest {
  double u = 0;       // the smaller of the two U statistics
  double p = 1;       // two-sided p-value
  bool exact = false; // from the exact distribution (small samples without ties)
};
// Two-sided Mann-Whitney U test: exact when both samples have at most 8 values and no ties,
// else the normal approximation with tie and continuity corrections (SciPy's defaults).
UTest mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace trainio::metrics
