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
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), lowest, [](const Bucket& b, std::uint64_t v) { return b.lowest < v; });
  if (it == buckets_.end() || it->lowest != lowest) it = buckets_.insert(it, Bucket{lowest, 0, 0});
  it->highest = highest;
  it->count += count;
}

void Latency::add_totals(std::uint64_t count, std::uint64_t sum, std::uint64_t min, std::uint64_t max) {
  if (count == 0) return;
  count_ += count;
  sum_ += sum;
  min_ = std::min(min_, min);
  max_ = std::max(max_, max);
}

void Latency::merge(const Latency& o) {
  if (o.buckets_.size() <= 4 || buckets_.empty()) {
    if (buckets_.empty()) buckets_ = o.buckets_;
    else for (const Bucket& b : o.buckets_) add_bucket(b.lowest, b.highest, b.count);
  } else {  // both sorted: one pass
    std::vector<Bucket> merged;
    merged.reserve(buckets_.size() + o.buckets_.size());
    auto a = buckets_.begin();
    auto b = o.buckets_.begin();
    while (a != buckets_.end() || b != o.buckets_.end()) {
      if (b == o.buckets_.end() || (a != buckets_.end() && a->lowest < b->lowest)) {
        merged.push_back(*a++);
      } else if (a == buckets_.end() || b->lowest < a->lowest) {
        merged.push_back(*b++);
      } else {
        merged.push_back({a->lowest, b->highest, a->count + b->count});
        ++a, ++b;
      }
    }
    buckets_ = std::move(merged);
  }
  add_totals(o.count_, o.sum_, o.min_, o.max_);
}

std::uint64_t Latency::bucketed() const {
  std::uint64_t n = 0;
  for (const Bucket& b : buckets_) n += b.count;
  return n;
}

std::uint64_t Latency::quantile(double q) const {
  if (count_ == 0) return 0;
  const auto wanted = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (const Bucket& b : buckets_) {
    seen += b.count;
    if (seen >= wanted) return std::clamp(b.highest, min(), max_);
  }
  return max_;
}

}  // namespace trainio::verify
