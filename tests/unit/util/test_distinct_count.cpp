// HyperLogLog distinct counts (util/distinct_count.hpp): within their error at every scale,
// blind to repeats, and merging as a union does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "util/distinct_count.hpp"
#include "util/rng.hpp"

using trainio::util::DistinctCount;
using trainio::util::mix64;

namespace {
// Adds the hashes of values [from, to).
void add_range(DistinctCount& c, std::uint64_t from, std::uint64_t to) {
  for (std::uint64_t v = from; v < to; ++v) c.add(mix64(v));
}
}  // namespace

TEST_CASE("an empty count is zero and allocates nothing") {
  const DistinctCount c;
  CHECK(c.estimate() == 0);
  const auto& regs = c.registers();
  CHECK(std::all_of(regs.begin(), regs.end(), [](std::uint8_t r) { return r == 0; }));
}

TEST_CASE("estimates stay within 5% (about 3 standard errors) from one to a million") {
  for (const std::uint64_t n : {1ULL, 10ULL, 1000ULL, 20000ULL, 1000000ULL}) {
    DistinctCount c;
    add_range(c, 0, n);
    INFO(n << " values");
    CHECK(std::abs(c.estimate() - static_cast<double>(n)) <= std::max(0.05 * static_cast<double>(n), 0.5));
  }
}

TEST_CASE("repeats do not count") {
  DistinctCount once, thrice;
  add_range(once, 0, 5000);
  for (int i = 0; i < 3; ++i) add_range(thrice, 0, 5000);
  CHECK(thrice.estimate() == once.estimate());
}

TEST_CASE("a merge is the count of the union, whatever the order") {
  DistinctCount a, b, both;
  add_range(a, 0, 30000);
  add_range(b, 20000, 50000);  // 10,000 in common
  add_range(both, 0, 50000);
  DistinctCount ab = a, ba = b;
  ab.merge(b);
  ba.merge(a);
  CHECK(ab.estimate() == both.estimate());  // register-wise maximum: exact, not approximate
  CHECK(ba.estimate() == both.estimate());
  DistinctCount empty;
  ab.merge(empty);
  CHECK(ab.estimate() == both.estimate());
}

TEST_CASE("a count that kept only its estimate keeps it, and refuses to count or merge on") {
  DistinctCount c;
  add_range(c, 0, 100);
  const double before = c.estimate();
  c.keep_estimate_only();
  CHECK(c.estimate() == before);
  c.keep_estimate_only();  // twice: the same
  CHECK(c.estimate() == before);
  DistinctCount other;
  CHECK_THROWS_AS(other.merge(c), std::logic_error);
  CHECK_THROWS_AS(c.merge(other), std::logic_error);
  CHECK_THROWS_AS(c.add(1), std::logic_error);
}
