#pragma once
// Latency distributions as `trainio verify` rebuilds them from a run's records: the buckets the
// records list, or values bucketed by the rule docs/results.md states, merged across ranks, and
// the quantiles the reports print. Written apart from metrics::Histogram on purpose: verify must
// not share the code whose figures it checks, only the documented rule.

#include <cstdint>
#include <vector>

namespace trainio::verify {

class Latency {
 public:
  // The bucket of a value (nanoseconds): exact below 64, then 64 buckets per power of two.
  static std::uint64_t lowest_of_bucket_holding(std::uint64_t value);
  static std::uint64_t highest_of_bucket_holding(std::uint64_t value);

  void add_value(std::uint64_t ns);
  // A bucket as the records list it: [lowest, highest] (inclusive) holding `count` values.
  void add_bucket(std::uint64_t lowest, std::uint64_t highest, std::uint64_t count);
  // The exact totals the records give beside their buckets.
  void add_totals(std::uint64_t count, std::uint64_t sum, std::uint64_t min, std::uint64_t max);
  void merge(const Latency& other);

  std::uint64_t count() const { return count_; }
  std::uint64_t sum() const { return sum_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }
  // The value at quantile q: the highest value of the bucket holding the ceil(q x count)-th
  // smallest value, within [min, max].
  std::uint64_t quantile(double q) const;
  // Values the buckets hold: the records' totals must agree with them.
  std::uint64_t bucketed() const;

 private:
  struct Bucket {
    std::uint64_t lowest, highest, count;
  };
  // By lowest value: a sorted vector, not a map (verify merges millions of small distributions).
  std::vector<Bucket> buckets_;
  std::uint64_t count_ = 0, sum_ = 0, min_ = ~0ULL, max_ = 0;
};

}  // namespace trainio::verify
