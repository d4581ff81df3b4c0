#include "verify/latency.hpp"

#include <algorithm>
#include <cmath>

namespace trainio::verify {

namespace {

// The power of two at or below v (v > 0), as its exponent.
int top_bit(std::uint64_t v) {
  int top = 0;
  while (v >>= 1) ++top;
  return top;
}

}  // namespace

std::uint64_t Latency::lowest_of_bucket_holding(std::uint64_t v) {
  if (v < 64) return v;
  const int shift = top_bit(v) - 6;  // 64 buckets between 2^top and 2^(top+1): the top 7 bits name one
  return (v >> shift) << shift;
}

std::uint64_t Latency::highest_of_bucket_holding(std::uint64_t v) {
  if (v < 64) return v;
  const int shift = top_bit(v) - 6;
  return lowest_of_bucket_holding(v) + ((1ULL << shift) - 1);
}

void Latency::add_value(std::uint64_t ns) {
  add_bucket(lowest_of_bucket_holding(ns), highest_of_bucket_holding(ns), 1);
  add_totals(1, ns, ns, ns);
}

void Latency::add_bucket(std::uint64_t lowest, std::uint64_t highest, std::uint64_t count) {
  auto& b = buckets_[lowest];
  b.first = highest;
  b.second += count;
}

void Latency::add_totals(std::uint64_t count, std::uint64_t sum, std::uint64_t min, std::uint64_t max) {
  if (count == 0) return;
  count_ += count;
  sum_ += sum;
  min_ = std::min(min_, min);
  max_ = std::max(max_, max);
}

void Latency::merge(const Latency& o) {
  for (const auto& [lowest, b] : o.buckets_) add_bucket(lowest, b.first, b.second);
  add_totals(o.count_, o.sum_, o.min_, o.max_);
}

std::uint64_t Latency::bucketed() const {
  std::uint64_t n = 0;
  for (const auto& [lowest, b] : buckets_) n += b.second;
  return n;
}

std::uint64_t Latency::quantile(double q) const {
  if (count_ == 0) return 0;
  const auto wanted = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (const auto& [lowest, b] : buckets_) {
    seen += b.second;
    if (seen >= wanted) return std::clamp(b.first, min(), max_);
  }
  return max_;
}

}  // namespace trainio::verify
