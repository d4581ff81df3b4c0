#pragma once
// Statistics over repeated runs: central values and spread, and the Mann-Whitney U test that
// decides whether two sets of runs differ (as Google Benchmark's compare.py uses it).

#include <cstddef>
#include <optional>
#include <vector>

namespace trainio::metrics {

double median_of(std::vector<double> v);
// Coefficient of variation: population stdev / |mean|. None for fewer than 2 values (one run
// says nothing of how runs vary) or a zero mean (a ratio to 0 has no value).
std::optional<double> cv_of(const std::vector<double>& v);
// (max - min) / |mean|: how far apart the runs are (MLPerf wants runs within 5%). None as cv_of.
std::optional<double> spread_of(const std::vector<double>& v);

// Splits of n1 + n2 values into sides of n1 and n2, C(n1 + n2, n1), up to which the U test's
// p-value is exact: every split is enumerated (up to 11 against 11 runs, 10 against 12, or 3 against 179).
inline constexpr double kExactUSplits = 1e6;

struct UTest {
  double u = 0;        // the smaller of the two U statistics
  double p = 1;        // two-sided p-value
  bool exact = false;  // from every split of the pooled values; else the normal approximation
};
// Two-sided Mann-Whitney U test. p = min(1, 2 x the smaller tail at the observed U) of U's
// permutation distribution given the ties (each of the C(n1 + n2, n1) splits of the pooled values
// equally likely), enumerated when there are at most kExactUSplits splits; above that the
// normal approximation with tie and continuity corrections. All values equal: p = 1.
UTest mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y);

// C(n1 + n2, n1), as a double (inf when it overflows).
double u_splits(std::size_t n1, std::size_t n2);
// The smallest p the test can give n1 against n2 values, ties or not: 2 / C(n1 + n2, n1), the
// one split that puts every x below (or above) every y counted in its tail (1 when that exceeds 1).
// mann_whitney_u never returns less.
double smallest_u_p(std::size_t n1, std::size_t n2);

}  // namespace trainio::metrics
