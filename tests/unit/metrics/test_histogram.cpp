#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "metrics/histogram.hpp"
#include "util/rng.hpp"

using trainio::metrics::Histogram;

TEST_CASE("bucket edges keep every value within 1/64 of itself") {
  for (std::uint64_t v : {0ull, 1ull, 63ull, 64ull, 65ull, 1000ull, 123456789ull, 1ull << 40, ~0ull >> 1}) {
    const int b = Histogram::bucket_of(v);
    REQUIRE(b >= 0);
    REQUIRE(b < Histogram::kBuckets);
    const std::uint64_t upper = Histogram::bucket_upper(b);
    CHECK(upper >= v);
    CHECK(static_cast<double>(upper - v) <= static_cast<double>(v) / 64.0 + 1);
  }
  CHECK(Histogram::bucket_of(~0ull) < Histogram::kBuckets);
}

TEST_CASE("quantiles are within 2% of the exact ones") {
  trainio::util::Rng rng(3);
  std::vector<std::uint64_t> values;
  Histogram h;
  for (int i = 0; i < 100000; ++i) {
    const auto v = static_cast<std::uint64_t>(1000 + 1e6 * -std::log(1 - rng.uniform()));
    values.push_back(v);
    h.record(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double exact = static_cast<double>(values[static_cast<size_t>(q * values.size()) - 1]);
    CHECK(static_cast<double>(h.quantile(q)) == Approx(exact).epsilon(0.02));
  }
  CHECK(h.max() == values.back());
  CHECK(h.min() == values.front());
  CHECK(h.count() == 100000);
}

TEST_CASE("histograms merge exactly and survive a round trip through words") {
  Histogram a, b, all;
  for (std::uint64_t v = 1; v < 5000; v += 7) {
    (v % 2 ? a : b).record(v);
    all.record(v);
  }
  Histogram merged = a;
  merged.merge(b);
  CHECK(merged.count() == all.count());
  CHECK(merged.quantile(0.5) == all.quantile(0.5));
  CHECK(merged.min() == 1);
  const Histogram copy = Histogram::from_words(merged.to_words());
  CHECK(copy.quantile(0.99) == merged.quantile(0.99));
  CHECK(copy.mean() == Approx(merged.mean()));
  CHECK(Histogram().quantile(0.5) == 0);
}

TEST_CASE("histograms allocate their buckets at the first value and copy deeply") {
  using trainio::metrics::Histogram;
  // A run keeps one per storage call kind, phase and checkpoint: the empty ones must cost nothing.
  STATIC_REQUIRE(sizeof(Histogram) <= 64);
  Histogram empty, filled;
  for (std::uint64_t v = 1; v <= 1000; ++v) filled.record(v);
  Histogram copy = filled;
  copy.record(5000);
  CHECK(filled.count() == 1000);
  CHECK(copy.count() == 1001);
  CHECK(filled.quantile(1.0) == 1000);
  Histogram merged = empty;
  merged.merge(empty);
  CHECK(merged.count() == 0);
  CHECK(merged.quantile(0.5) == 0);
  merged.merge(filled);
  CHECK(merged.quantile(0.5) == filled.quantile(0.5));
  const Histogram back = Histogram::from_words(empty.to_words());
  CHECK(back.count() == 0);
  CHECK(Histogram::from_words(filled.to_words()).quantile(0.99) == filled.quantile(0.99));
}

TEST_CASE("a histogram that keeps only its reported quantiles answers them as before, and nothing else") {
  Histogram h;
  for (std::uint64_t v = 1; v <= 10000; ++v) h.record(v * 37);
  const Histogram full = h;
  h.keep_reported_quantiles();
  CHECK_FALSE(h.buckets_kept());
  CHECK(full.buckets_kept());
  for (const double q : Histogram::kReported) CHECK(h.quantile(q) == full.quantile(q));
  CHECK(h.count() == full.count());
  CHECK(h.sum() == full.sum());
  CHECK(h.min() == full.min());
  CHECK(h.max() == full.max());
  const Histogram copy = h;  // copies keep the quantiles
  CHECK(copy.quantile(0.99) == full.quantile(0.99));
  // What the buckets alone could answer is a bug to ask for, not a wrong figure.
  CHECK_THROWS_AS(h.quantile(0.75), std::logic_error);
  Histogram other;
  other.record(5);
  CHECK_THROWS_AS(other.merge(h), std::logic_error);
  CHECK_THROWS_AS(h.merge(other), std::logic_error);
  CHECK_THROWS_AS(h.to_words(), std::logic_error);
  Histogram empty;
  empty.keep_reported_quantiles();
  CHECK(empty.quantile(0.5) == 0);
  CHECK_THROWS_AS(empty.record(1), std::logic_error);
}

TEST_CASE("values sharing a measured total evenly keep the total exact") {
  Histogram h;
  h.record_even(1003, 4);  // 1003 / 4 = 250 rest 3: one 250, three 251
  CHECK(h.count() == 4);
  CHECK(h.sum() == 1003.0);
  CHECK(h.min() == 250);
  CHECK(h.max() == 251);
  h.record_even(7, 0);  // nothing to share it
  CHECK(h.count() == 4);
  h.record_even(2, 5);  // less than one each: three 0s, two 1s
  CHECK(h.count() == 9);
  CHECK(h.sum() == 1005.0);
  CHECK(h.min() == 0);
  Histogram one;
  one.record_even(5000, 1);
  CHECK(one.count() == 1);
  CHECK(one.min() == 5000);
  CHECK(one.max() == 5000);
}
