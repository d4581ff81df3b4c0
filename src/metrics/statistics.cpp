#include "metrics/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "metrics/summary.hpp"

namespace trainio::metrics {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double cv_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  return m != 0 ? stdev_of(v) / std::fabs(m) : 0;
}

double spread_of(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double m = mean_of(v);
  return m != 0 ? (*hi - *lo) / std::fabs(m) : 0;
}

namespace {

// Number of ways to pick n1 of n1 + n2 ranks with each rank sum: the exact null distribution of
// U (as counts over U = 0 .. n1 n2).
std::vector<double> u_distribution(int n1, int n2) {
  // f[i][j][u]: arrangements of i x's and j y's with U = u; built up by appending the largest value.
  const int max_u = n1 * n2;
  std::vector<std::vector<std::vector<double>>> f(
      static_cast<std::size_t>(n1 + 1),
      std::vector<std::vector<double>>(static_cast<std::size_t>(n2 + 1), std::vector<double>(static_cast<std::size_t>(max_u + 1), 0)));
  for (int i = 0; i <= n1; ++i)
    for (int j = 0; j <= n2; ++j) {
      auto& cell = f[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      if (i == 0 || j == 0) {
        cell[0] = 1;
        continue;
      }
      // The largest value is an x (it beats all j y's: U grows by j) or a y (U unchanged).
      const auto& with_x = f[static_cast<std::size_t>(i - 1)][static_cast<std::size_t>(j)];
      const auto& with_y = f[static_cast<std::size_t>(i)][static_cast<std::size_t>(j - 1)];
      for (int u = 0; u <= max_u; ++u) {
        double c = with_y[static_cast<std::size_t>(u)];
        if (u >= j) c += with_x[static_cast<std::size_t>(u - j)];
        cell[static_cast<std::size_t>(u)] = c;
      }
    }
  return f[static_cast<std::size_t>(n1)][static_cast<std::size_t>(n2)];
}

double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

UTest mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y) {
  UTest t;
  const std::size_t n1 = x.size(), n2 = y.size();
  if (n1 == 0 || n2 == 0) return t;
  // Ranks of the pooled values, ties sharing their mean rank.
  std::vector<std::pair<double, int>> all;
  for (const double v : x) all.emplace_back(v, 0);
  for (const double v : y) all.emplace_back(v, 1);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum_x = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    const double count = static_cast<double>(j - i);
    if (count > 1) {
      ties = true;
      tie_term += count * count * count - count;
    }
    for (std::size_t k = i; k < j; ++k)
      if (all[k].second == 0) rank_sum_x += rank;
    i = j;
  }
  const double a = static_cast<double>(n1), b = static_cast<double>(n2);
  const double u1 = rank_sum_x - a * (a + 1) / 2, u2 = a * b - u1;
  t.u = std::min(u1, u2);
  if (!ties && n1 <= 8 && n2 <= 8) {
    const auto counts = u_distribution(static_cast<int>(n1), static_cast<int>(n2));
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    double tail = 0;
    for (std::size_t u = 0; u < counts.size() && static_cast<double>(u) <= t.u; ++u) tail += counts[u];
    t.p = std::min(1.0, 2 * tail / total);
    t.exact = true;
    return t;
  }
  const double mean = a * b / 2;
  const double n = a + b;
  const double sd = std::sqrt(a * b / 12 * ((n + 1) - tie_term / (n * (n - 1))));
  if (sd == 0) return t;
  const double z = (std::fabs(u1 - mean) - 0.5) / sd;  // continuity correction
  t.p = std::min(1.0, 2 * normal_sf(std::max(0.0, z)));
  return t;
}

}  // namespace trainio::metrics
