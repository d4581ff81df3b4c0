#include <catch2/catch.hpp>

#include "metrics/statistics.hpp"

using namespace trainio::metrics;

TEST_CASE("median, coefficient of variation and spread") {
  CHECK(median_of({3, 1, 2}) == 2);
  CHECK(median_of({4, 1, 2, 3}) == 2.5);
  CHECK(cv_of({10, 10, 10}) == 0);
  CHECK(cv_of({9, 11}) == Approx(0.1));      // population stdev 1, mean 10
  CHECK(spread_of({95, 100, 105}) == Approx(0.1));
}

TEST_CASE("Mann-Whitney U: exact p-values for small samples without ties") {
  // Fully separated 3 vs 3: U = 0, P(U <= 0) = 1/20, two-sided 0.1 -- three runs a side can never
  // reach p < 0.05.
  auto t = mann_whitney_u({1, 2, 3}, {4, 5, 6});
  CHECK(t.exact);
  CHECK(t.u == 0);
  CHECK(t.p == Approx(0.1));
  // 5 vs 5 fully separated: 2 / C(10, 5) = 2 / 252.
  CHECK(mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}).p == Approx(2.0 / 252));
  // Interleaved: no evidence of a difference.
  CHECK(mann_whitney_u({1, 3, 5, 7}, {2, 4, 6, 8}).p > 0.5);
  // U from x's side: x = {1, 4}, y = {2, 3}: U_x = 2 (4 beats 2 and 3), U_y = 2.
  CHECK(mann_whitney_u({1, 4}, {2, 3}).u == 2);
}

TEST_CASE("Mann-Whitney U: the normal approximation with ties") {
  // By hand: U_x = 0.5 + 1.5 + 2.5 + 3.5 + 4.5 = 12.5 (ties count half); mean 50; seven pairs of
  // ties: sd = sqrt(100 / 12 x (21 - 42 / 380)) = 13.194; z = (37.5 - 0.5) / 13.194 = 2.8043;
  // p = 2 x (1 - Phi(2.8043)) = 0.005042, as SciPy 1.10.1's mannwhitneyu(two-sided) gives. (SciPy
  // also gives 0.1, 0.0079365 and 0.6857 for the exact cases above.)
  const std::vector<double> x = {1, 2, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<double> y = {5, 6, 7, 8, 9, 10, 11, 12, 12, 13};
  const auto t = mann_whitney_u(x, y);
  CHECK_FALSE(t.exact);
  CHECK(t.u == Approx(12.5));
  CHECK(t.p == Approx(0.00504).margin(0.00002));
}
