#include "metrics/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "metrics/summary.hpp"

namespace trainio::metrics {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::optional<double> cv_of(const std::vector<double>& v) {
  const double m = v.size() < 2 ? 0 : mean_of(v);
  if (m == 0) return std::nullopt;
  return stdev_of(v) / std::fabs(m);
}

std::optional<double> spread_of(const std::vector<double>& v) {
  const double m = v.size() < 2 ? 0 : mean_of(v);
  if (m == 0) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return (*hi - *lo) / std::fabs(m);
}

double u_splits(std::size_t n1, std::size_t n2) {
  const std::size_t k = std::min(n1, n2), n = n1 + n2;
  double c = 1;
  for (std::size_t i = 1; i <= k; ++i) c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
  return std::round(c);
}

double smallest_u_p(std::size_t n1, std::size_t n2) { return std::min(1.0, 2 / u_splits(n1, n2)); }

namespace {

// Counts the ways to pick `left` more of ranks[from..] whose doubled rank sums, added to `sum`,
// are at most and at least `observed`. Every split of the pooled values is one pick.
void count_splits(const std::vector<std::int64_t>& ranks, std::size_t from, std::size_t left, std::int64_t sum,
                  std::int64_t observed, std::uint64_t& at_most, std::uint64_t& at_least) {
  if (left == 0) {
    at_most += sum <= observed;
    at_least += sum >= observed;
    return;
  }
  for (std::size_t i = from; i + left <= ranks.size(); ++i)
    count_splits(ranks, i + 1, left - 1, sum + ranks[i], observed, at_most, at_least);
}

double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

UTest mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y) {
  UTest t;
  const std::size_t n1 = x.size(), n2 = y.size();
  if (n1 == 0 || n2 == 0) return t;
  // Doubled mid-ranks of the pooled values (ties share their mean rank; doubled, they stay integers).
  std::vector<std::pair<double, int>> all;
  for (const double v : x) all.emplace_back(v, 0);
  for (const double v : y) all.emplace_back(v, 1);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::int64_t> ranks(all.size());
  std::int64_t rank_sum_x = 0;  // doubled
  double tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const auto doubled = static_cast<std::int64_t>(i + 1 + j);
    const double count = static_cast<double>(j - i);
    tie_term += count * count * count - count;
    for (std::size_t k = i; k < j; ++k) {
      ranks[k] = doubled;
      if (all[k].second == 0) rank_sum_x += doubled;
    }
    i = j;
  }
  const double a = static_cast<double>(n1), b = static_cast<double>(n2);
  const double u1 = static_cast<double>(rank_sum_x) / 2 - a * (a + 1) / 2;
  t.u = std::min(u1, a * b - u1);
  const double splits = u_splits(n1, n2);
  if (splits <= kExactUSplits) {
    // One side's rank sum over every split (U is it less a constant, so U's tails are its tails),
    // enumerated for the smaller side; the smaller tail is the same whichever side is counted.
    std::uint64_t at_most = 0, at_least = 0;
    const bool x_smaller = n1 <= n2;
    const std::int64_t observed = x_smaller ? rank_sum_x : static_cast<std::int64_t>(all.size() * (all.size() + 1)) - rank_sum_x;
    count_splits(ranks, 0, x_smaller ? n1 : n2, 0, observed, at_most, at_least);
    t.p = std::min(1.0, 2 * static_cast<double>(std::min(at_most, at_least)) / splits);
    t.exact = true;
    return t;
  }
  const double n = a + b;
  const double sd = std::sqrt(a * b / 12 * ((n + 1) - tie_term / (n * (n - 1))));
  if (sd == 0) return t;  // all values equal: no evidence
  const double z = (std::fabs(u1 - a * b / 2) - 0.5) / sd;  // continuity correction
  // The exact p is never below its one most extreme split's share; nor is its approximation.
  t.p = std::max(smallest_u_p(n1, n2), std::min(1.0, 2 * normal_sf(std::max(0.0, z))));
  return t;
}

}  // namespace trainio::metrics
