#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "util/permutation.hpp"
#include "util/rng.hpp"

using namespace trainio::util;

TEST_CASE("the generator is deterministic for a seed and differs between seeds") {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    CHECK(x == b.next());
    CHECK(x != c.next());
  }
}

TEST_CASE("below() is uniform and in range") {
  Rng rng(7);
  std::vector<int> counts(10);
  for (int i = 0; i < 100000; ++i) {
    const auto v = rng.below(10);
    REQUIRE(v < 10);
    ++counts[v];
  }
  for (int c : counts) CHECK(std::abs(c - 10000) < 500);
}

TEST_CASE("normal() has mean 0 and deviation 1") {
  Rng rng(11);
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = rng.normal();
    sum += x;
    sq += x * x;
  }
  CHECK(std::fabs(sum / n) < 0.01);
  CHECK(std::fabs(std::sqrt(sq / n) - 1.0) < 0.01);
}

TEST_CASE("fill() writes every byte, with roughly uniform values, for any length") {
  Rng rng(5);
  for (std::size_t len : {0u, 1u, 7u, 31u, 32u, 33u, 4096u}) {
    std::vector<unsigned char> buf(len + 2, 0xAB);
    rng.fill(buf.data() + 1, len);
    CHECK(buf.front() == 0xAB);
    CHECK(buf.back() == 0xAB);
  }
  std::vector<unsigned char> big(1 << 20);
  rng.fill(big.data(), big.size());
  std::vector<int> hist(256);
  for (auto b : big) ++hist[b];
  for (int h : hist) CHECK(std::abs(h - 4096) < 400);
}

TEST_CASE("a permutation is a bijection of 0..n-1 for awkward sizes") {
  for (std::uint64_t n : {1ull, 2ull, 3ull, 13ull, 64ull, 65ull, 1000ull, 4097ull}) {
    const Permutation p(n, 99);
    std::vector<bool> seen(n, false);
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto v = p(i);
      REQUIRE(v < n);
      REQUIRE_FALSE(seen[v]);
      seen[v] = true;
    }
  }
}

TEST_CASE("permutations depend on the seed and really shuffle") {
  const std::uint64_t n = 1000;
  const Permutation a(n, 1), b(n, 1), c(n, 2);
  int same_ab = 0, same_ac = 0, fixed = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    same_ab += a(i) == b(i);
    same_ac += a(i) == c(i);
    fixed += a(i) == i;
  }
  CHECK(same_ab == static_cast<int>(n));
  CHECK(same_ac < 20);  // about 1 expected by chance
  CHECK(fixed < 20);
  // Neighbours do not stay neighbours.
  int adjacent = 0;
  for (std::uint64_t i = 0; i + 1 < n; ++i) adjacent += (a(i + 1) == a(i) + 1);
  CHECK(adjacent < 20);
}

TEST_CASE("derived seeds separate their inputs") {
  std::set<std::uint64_t> seeds;
  for (std::uint64_t e = 0; e < 50; ++e)
    for (std::uint64_t f = 0; f < 50; ++f) seeds.insert(derive_seed(123, e, f));
  CHECK(seeds.size() == 2500);
}
