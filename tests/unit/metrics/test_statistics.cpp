#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "metrics/statistics.hpp"

using namespace trainio::metrics;

TEST_CASE("median, coefficient of variation and spread") {
  CHECK(median_of({3, 1, 2}) == 2);
  CHECK(median_of({4, 1, 2, 3}) == 2.5);
  CHECK(cv_of({10, 10, 10}) == 0);
  CHECK(cv_of({9, 11}) == Approx(0.1));      // population stdev 1, mean 10
  CHECK(spread_of({95, 100, 105}) == Approx(0.1));
  // One value says nothing of how values vary, and a ratio to a zero mean has no value.
  CHECK_FALSE(cv_of({10}));
  CHECK_FALSE(spread_of({10}));
  CHECK_FALSE(cv_of({}));
  CHECK_FALSE(spread_of({}));
  CHECK_FALSE(cv_of({0, 0}));
  CHECK_FALSE(spread_of({-1, 1}));
  CHECK(spread_of({-90, -110}) == Approx(0.2));  // relative to |mean|
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
  // 4 vs 4 and 3 vs 5 fully separated: 2 / C(8, 4) = 2 / 70 and 2 / C(8, 3) = 2 / 56.
  CHECK(mann_whitney_u({1, 2, 3, 4}, {5, 6, 7, 8}).p == Approx(2.0 / 70));
  CHECK(mann_whitney_u({6, 7, 8}, {1, 2, 3, 4, 5}).p == Approx(2.0 / 56));
  // Interleaved: no evidence of a difference.
  CHECK(mann_whitney_u({1, 3, 5, 7}, {2, 4, 6, 8}).p > 0.5);
  // U from x's side: x = {1, 4}, y = {2, 3}: U_x = 2 (4 beats 2 and 3), U_y = 2.
  CHECK(mann_whitney_u({1, 4}, {2, 3}).u == 2);
}

// The two-sided p below is min(1, 2 x min(P(U <= U_obs), P(U >= U_obs))) over every way to split
// the pooled values into sides of the given sizes, each split equally likely; U counts the pairs
// x beats y, a tie half. Values checked by enumerating the splits with Python's
// itertools.combinations (U counted pair by pair, exact fractions).
TEST_CASE("Mann-Whitney U: ties get the exact p-value of their permutation distribution") {
  // The case of the issue: 3 identical runs against 3 identical runs. Of the C(6, 3) = 20 splits
  // only one puts every 100 on x's side: P(U >= 9) = 1/20, two-sided 0.1 (the normal
  // approximation said 0.0469, below what 3 vs 3 runs can ever reach).
  auto t = mann_whitney_u({100, 100, 100}, {80, 80, 80});
  CHECK(t.exact);
  CHECK(t.u == 0);
  CHECK(t.p == Approx(0.1));
  CHECK(mann_whitney_u({100, 100, 101}, {80, 80, 80}).p == Approx(0.1));
  // 4 vs 4 and 3 vs 5, identical within each side: 2/70 and 2/56, as without ties.
  CHECK(mann_whitney_u({10, 10, 10, 10}, {8, 8, 8, 8}).p == Approx(2.0 / 70));
  CHECK(mann_whitney_u({100, 100, 100}, {80, 80, 80, 80, 80}).p == Approx(2.0 / 56));
  // Ties across the sides: U_x = 2.5, P(U <= 2.5) = 7/70, two-sided 0.2.
  CHECK(mann_whitney_u({1, 2, 2, 3}, {2, 3, 4, 5}).p == Approx(0.2));
  // U_x = 1, P(U <= 1) = 3/56, two-sided 3/28.
  CHECK(mann_whitney_u({1, 2, 2}, {2, 3, 3, 4, 4}).p == Approx(3.0 / 28));
  // 10 vs 10 with seven tied pairs (C(20, 10) = 184756 splits, exact): U_x = 12.5, 308 splits
  // with U <= 12.5, p = 616 / 184756 = 0.0033341 (the normal approximation gives 0.00504).
  const auto ten = mann_whitney_u({1, 2, 2, 3, 4, 5, 6, 7, 8, 9}, {5, 6, 7, 8, 9, 10, 11, 12, 12, 13});
  CHECK(ten.exact);
  CHECK(ten.u == Approx(12.5));
  CHECK(ten.p == Approx(616.0 / 184756).epsilon(1e-9));
}

TEST_CASE("Mann-Whitney U: all values equal is no evidence, p = 1") {
  for (const auto& [x, y] : std::vector<std::pair<std::vector<double>, std::vector<double>>>{
           {{5}, {5}}, {{5, 5, 5}, {5, 5, 5}}, {{7, 7, 7, 7}, {7, 7, 7, 7, 7, 7}}}) {
    const auto t = mann_whitney_u(x, y);
    CHECK(t.p == 1);
    CHECK(t.u == Approx(x.size() * y.size() / 2.0));
  }
}

TEST_CASE("Mann-Whitney U: the normal approximation with ties beyond the exact limit") {
  // 12 vs 12: C(24, 12) = 2704156 splits, more than are enumerated. By hand: U_x = 24.5 (ties
  // count half); mean 72; nine tied pairs: sd = sqrt(144 / 12 x (25 - 54 / 552)) = 17.2866;
  // z = (47.5 - 0.5) / 17.2866 = 2.71887; p = 2 x (1 - Phi(2.71887)) = 0.0065505.
  const std::vector<double> x = {1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const std::vector<double> y = {5, 6, 7, 8, 9, 10, 11, 12, 12, 13, 14, 15};
  const auto t = mann_whitney_u(x, y);
  CHECK_FALSE(t.exact);
  CHECK(t.u == Approx(24.5));
  CHECK(t.p == Approx(0.0065505).epsilon(1e-4));
}

namespace {

// An independent exact p: every split of the pooled values, U counted pair by pair (doubled, so
// a tie counts 1 and the sums stay integers).
double brute_force_p(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> pool = x;
  pool.insert(pool.end(), y.begin(), y.end());
  const auto doubled_u = [](const std::vector<double>& a, const std::vector<double>& b) {
    long u = 0;
    for (const double p : a)
      for (const double q : b) u += p > q ? 2 : p == q ? 1 : 0;
    return u;
  };
  const long observed = doubled_u(x, y);
  std::vector<bool> pick(pool.size(), false);
  std::fill(pick.begin(), pick.begin() + static_cast<long>(x.size()), true);
  long le = 0, ge = 0, total = 0;
  do {
    std::vector<double> a, b;
    for (std::size_t i = 0; i < pool.size(); ++i) (pick[i] ? a : b).push_back(pool[i]);
    const long u = doubled_u(a, b);
    le += u <= observed;
    ge += u >= observed;
    ++total;
  } while (std::prev_permutation(pick.begin(), pick.end()));
  return std::min(1.0, 2.0 * static_cast<double>(std::min(le, ge)) / static_cast<double>(total));
}

}  // namespace

TEST_CASE("Mann-Whitney U: exact p-values agree with brute-force enumeration, ties or not") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n1 = 1 + rng() % 6, n2 = 1 + rng() % 6;
    const int levels = 1 + static_cast<int>(rng() % 6);  // few levels: many ties
    std::vector<double> x, y;
    for (std::size_t i = 0; i < n1; ++i) x.push_back(static_cast<double>(rng() % static_cast<unsigned>(levels)));
    for (std::size_t i = 0; i < n2; ++i) y.push_back(static_cast<double>(rng() % static_cast<unsigned>(levels) + trial % 3));
    const auto t = mann_whitney_u(x, y);
    INFO("trial " << trial);
    CHECK(t.exact);
    CHECK(t.p == Approx(brute_force_p(x, y)).epsilon(1e-12));
    // Which side is which changes nothing.
    CHECK(mann_whitney_u(y, x).p == Approx(t.p).epsilon(1e-12));
  }
}

TEST_CASE("Mann-Whitney U: the smallest p for the sample sizes bounds every p the test gives") {
  CHECK(smallest_u_p(3, 3) == Approx(0.1));
  CHECK(smallest_u_p(4, 4) == Approx(2.0 / 70));
  CHECK(smallest_u_p(3, 5) == Approx(2.0 / 56));
  CHECK(smallest_u_p(5, 3) == Approx(2.0 / 56));
  CHECK(smallest_u_p(2, 2) == Approx(1.0 / 3));
  CHECK(smallest_u_p(1, 1) == 1);
  CHECK(u_splits(11, 11) == 705432);
  CHECK(u_splits(12, 12) == 2704156);
  std::mt19937 rng(11);
  for (std::size_t n1 = 1; n1 <= 9; ++n1)
    for (std::size_t n2 = 1; n2 <= 9; ++n2) {
      INFO(n1 << " vs " << n2);
      // Completely apart, with or without ties within a side: the smallest p.
      std::vector<double> low(n1), high(n2), low_tied(n1, 1.0), high_tied(n2, 2.0);
      for (std::size_t i = 0; i < n1; ++i) low[i] = static_cast<double>(i);
      for (std::size_t i = 0; i < n2; ++i) high[i] = static_cast<double>(n1 + i);
      CHECK(mann_whitney_u(low, high).p == Approx(smallest_u_p(n1, n2)));
      CHECK(mann_whitney_u(high_tied, low_tied).p == Approx(smallest_u_p(n1, n2)));
      for (int trial = 0; trial < 5; ++trial) {
        std::vector<double> x, y;
        for (std::size_t i = 0; i < n1; ++i) x.push_back(static_cast<double>(rng() % 3));
        for (std::size_t i = 0; i < n2; ++i) y.push_back(static_cast<double>(rng() % 4));
        CHECK(mann_whitney_u(x, y).p >= smallest_u_p(n1, n2));
      }
    }
  // Beyond the exact limit too: 12 identical values against 12 others.
  const auto t = mann_whitney_u(std::vector<double>(12, 1.0), std::vector<double>(12, 2.0));
  CHECK_FALSE(t.exact);
  CHECK(t.p >= smallest_u_p(12, 12));
  CHECK(t.p < 1e-5);
}
