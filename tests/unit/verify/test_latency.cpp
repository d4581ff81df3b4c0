#include <catch2/catch.hpp>

#include <random>

#include "metrics/histogram.hpp"
#include "verify/latency.hpp"

using trainio::metrics::Histogram;
using trainio::verify::Latency;

// verify rebuilds distributions by the rule docs/results.md states, with code of its own: it must
// bucket and answer exactly as the histograms whose figures it checks.
TEST_CASE("verify's latency buckets are the histograms' buckets", "[verify]") {
  for (std::uint64_t v : {0ULL, 1ULL, 63ULL, 64ULL, 65ULL, 127ULL, 128ULL, 129ULL, 1000ULL, 123456789ULL, (1ULL << 40) + 12345}) {
    const int b = Histogram::bucket_of(v);
    CHECK(Latency::lowest_of_bucket_holding(v) == Histogram::bucket_lower(b));
    CHECK(Latency::highest_of_bucket_holding(v) == Histogram::bucket_upper(b));
  }
}

TEST_CASE("verify's quantiles of values, and of the buckets a record lists, are the histogram's", "[verify]") {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> ns(12.0, 2.0);
  Histogram h;
  Latency from_values, from_buckets;
  for (int i = 0; i < 20000; ++i) {
    const auto v = static_cast<std::uint64_t>(ns(rng));
    h.record(v);
    from_values.add_value(v);
  }
  h.for_each_bucket([&](std::uint64_t lo, std::uint64_t hi, std::uint64_t n) { from_buckets.add_bucket(lo, hi, n); });
  from_buckets.add_totals(h.count(), static_cast<std::uint64_t>(h.sum()), h.min(), h.max());
  for (const double q : {0.0, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    CHECK(from_values.quantile(q) == h.quantile(q));
    CHECK(from_buckets.quantile(q) == h.quantile(q));
  }
  CHECK(from_buckets.bucketed() == h.count());
  CHECK(from_values.max() == h.max());
  CHECK(from_values.mean() == Approx(h.mean()));
}

TEST_CASE("merged latencies answer as one histogram of every value", "[verify]") {
  Latency a, b;
  Histogram all;
  for (std::uint64_t v = 1; v < 5000; v += 7) {
    (v % 2 ? a : b).add_value(v * 1000);
    all.record(v * 1000);
  }
  a.merge(b);
  CHECK(a.count() == all.count());
  CHECK(a.quantile(0.99) == all.quantile(0.99));
  CHECK(a.min() == all.min());
}
