#pragma once
// A fixed-size histogram of positive values (bytes, nanoseconds) in quarter-octave buckets: 256
// counters whatever the trace's length, mergeable, and comparable by how far apart two
// distributions are in octaves.

#include <array>
#include <cstdint>

namespace trainio::capture {

class LogHistogram {
 public:
  static constexpr int kBuckets = 256;
  static constexpr int kPerOctave = 4;
  static int bucket(std::uint64_t v);
  // The smallest value a bucket holds.
  static std::uint64_t lower(int bucket);

  void add(std::uint64_t v, std::uint64_t n = 1) { counts_[bucket(v)] += n, total_ += n; }
  void merge(const LogHistogram& o);
  std::uint64_t total() const { return total_; }
  std::uint64_t count(int b) const { return counts_[b]; }
  // The value below which `q` of the counts lie (the lower bound of its bucket); 0 when empty.
  std::uint64_t quantile(double q) const;
  // The bucket holding the most counts (-1 when empty).
  int mode() const;

 private:
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t total_ = 0;
};

// Earth mover's distance between the two normalised distributions, in octaves: how far, on
// average, one's mass must move to become the other's. 0 when equal; -1 when either is empty.
double octaves_apart(const LogHistogram& a, const LogHistogram& b);

}  // namespace trainio::capture
