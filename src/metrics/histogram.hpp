#pragma once
// A log-linear latency histogram (HdrHistogram-style): values are bucketed by their power of two
// and, within it, by the next 6 bits, so any recorded value is known to within 1/64 (~1.6%).
// Fixed memory, O(1) insert, exact merge across threads and ranks (bucket counts add up). The
// 30 KiB of buckets are allocated at the first value: a run keeps a histogram per storage call
// kind, phase and checkpoint, and most of them stay empty. A finished phase's histograms keep
// only the quantiles the reports print (keep_reported_quantiles), so that a long run's memory
// does not grow by their buckets with every epoch.

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace trainio::metrics {

class Histogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;  // sub-buckets per power of two
  static constexpr int kOctaves = 64 - kSubBits;
  static constexpr int kBuckets = kSub + kOctaves * kSub;  // values < kSub are exact

  Histogram() = default;
  Histogram(const Histogram& other) { *this = other; }
  Histogram& operator=(const Histogram& other);
  Histogram(Histogram&&) noexcept = default;
  Histogram& operator=(Histogram&&) noexcept = default;

  void record(std::uint64_t value) {
    if (!counts_) allocate();
    ++(*counts_)[static_cast<std::size_t>(bucket_of(value))];
    ++count_;
    sum_ += value;
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }
  // `n` values that share `total` evenly (their mean is all that was measured): total / n each,
  // one more for total % n of them, so that the sum stays exact.
  void record_even(std::uint64_t total, std::uint64_t n);

  // Merging needs the buckets of both: not after keep_reported_quantiles.
  void merge(const Histogram& other);

  // The quantiles the reports print (p50, p90, p99, p99.9); quantile() answers them alone after
  // keep_reported_quantiles, which frees the buckets and keeps count, sum, min, max and these.
  static constexpr std::array<double, 4> kReported = {0.50, 0.90, 0.99, 0.999};
  void keep_reported_quantiles();
  bool buckets_kept() const { return !reported_; }

  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  double sum() const { return static_cast<double>(sum_); }
  // The value at quantile q in [0, 1] (upper edge of its bucket, clamped to the true max).
  // After keep_reported_quantiles, q must be one of kReported.
  std::uint64_t quantile(double q) const;

  // Raw state, for MPI reduction: counts then count, sum, min, max.
  std::vector<std::uint64_t> to_words() const;
  static Histogram from_words(const std::vector<std::uint64_t>& words, std::size_t offset = 0);
  static constexpr std::size_t kWords = kBuckets + 4;

  static int bucket_of(std::uint64_t v);
  static std::uint64_t bucket_lower(int bucket);
  static std::uint64_t bucket_upper(int bucket);
  // Each bucket that holds values, in order: f(lowest value, highest value, count) (bounds
  // inclusive), for the run's records. Needs the buckets.
  template <typename F>
  void for_each_bucket(F&& f) const {
    require_buckets("list the buckets of");
    if (!counts_) return;
    for (int i = 0; i < kBuckets; ++i)
      if (const std::uint64_t n = (*counts_)[static_cast<std::size_t>(i)]; n > 0) f(bucket_lower(i), bucket_upper(i), n);
  }

 private:
  using Buckets = std::array<std::uint64_t, kBuckets>;
  void allocate();
  std::uint64_t quantile_of_buckets(double q) const;
  void require_buckets(const char* what) const;
  std::unique_ptr<Buckets> counts_;  // none until the first value
  // After keep_reported_quantiles: the value at each of kReported.
  std::unique_ptr<std::array<std::uint64_t, kReported.size()>> reported_;
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t min_ = ~0ULL;
  std::uint64_t max_ = 0;
};

}  // namespace trainio::metrics
