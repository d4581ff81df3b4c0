#include "metrics/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

namespace trainio::metrics {

int Histogram::bucket_of(std::uint64_t v) {
  if (v < static_cast<std::uint64_t>(kSub)) return static_cast<int>(v);
  const int top = std::bit_width(v) - 1;  // >= kSubBits
  const int shift = top - kSubBits;
  const int sub = static_cast<int>((v >> shift) & (kSub - 1));
  return kSub + (top - kSubBits) * kSub + sub;
}

void Histogram::record_even(std::uint64_t total, std::uint64_t n) {
  if (n == 0) return;
  if (!counts_) allocate();
  const std::uint64_t each = total / n, more = total % n;
  auto add = [&](std::uint64_t value, std::uint64_t times) {
    if (times == 0) return;
    (*counts_)[static_cast<std::size_t>(bucket_of(value))] += times;
    count_ += times;
    sum_ += value * times;
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  };
  add(each, n - more);
  add(each + 1, more);
}

std::uint64_t Histogram::bucket_lower(int bucket) { return bucket == 0 ? 0 : bucket_upper(bucket - 1) + 1; }

std::uint64_t Histogram::bucket_upper(int bucket) {
  if (bucket < kSub) return static_cast<std::uint64_t>(bucket);
  const int octave = (bucket - kSub) / kSub;  // top - kSubBits
  const int sub = (bucket - kSub) % kSub;
  const int shift = octave;
  const std::uint64_t base = (static_cast<std::uint64_t>(kSub) | static_cast<std::uint64_t>(sub)) << shift;
  return base + ((1ULL << shift) - 1);
}

void Histogram::allocate() {
  require_buckets("record a value in");
  counts_ = std::make_unique<Buckets>();
}

// A histogram that kept only its reported quantiles cannot say more: a caller that asks is a bug.
void Histogram::require_buckets(const char* what) const {
  if (reported_) throw std::logic_error(std::string("cannot ") + what + " a histogram that kept only its reported quantiles");
}

Histogram& Histogram::operator=(const Histogram& other) {
  if (this == &other) return *this;
  counts_ = other.counts_ ? std::make_unique<Buckets>(*other.counts_) : nullptr;
  reported_ = other.reported_ ? std::make_unique<std::array<std::uint64_t, kReported.size()>>(*other.reported_) : nullptr;
  count_ = other.count_;
  sum_ = other.sum_;
  min_ = other.min_;
  max_ = other.max_;
  return *this;
}

void Histogram::merge(const Histogram& other) {
  require_buckets("merge into");
  other.require_buckets("merge");
  if (other.counts_) {
    if (!counts_) allocate();
    for (std::size_t i = 0; i < kBuckets; ++i) (*counts_)[i] += (*other.counts_)[i];
  }
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::keep_reported_quantiles() {
  if (reported_) return;
  auto kept = std::make_unique<std::array<std::uint64_t, kReported.size()>>();
  for (std::size_t i = 0; i < kReported.size(); ++i) (*kept)[i] = quantile_of_buckets(kReported[i]);
  reported_ = std::move(kept);
  counts_.reset();
}

std::uint64_t Histogram::quantile(double q) const {
  if (!reported_) return quantile_of_buckets(q);
  for (std::size_t i = 0; i < kReported.size(); ++i)
    if (kReported[i] == q) return (*reported_)[i];
  throw std::logic_error("a histogram that kept only its reported quantiles was asked for another one");
}

std::uint64_t Histogram::quantile_of_buckets(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  if (!counts_) return 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += (*counts_)[static_cast<std::size_t>(i)];
    if (seen >= std::max<std::uint64_t>(rank, 1)) return std::clamp(bucket_upper(i), min(), max_);
  }
  return max_;
}

std::vector<std::uint64_t> Histogram::to_words() const {
  require_buckets("reduce");
  std::vector<std::uint64_t> w = counts_ ? std::vector<std::uint64_t>(counts_->begin(), counts_->end())
                                         : std::vector<std::uint64_t>(kBuckets, 0);
  w.push_back(count_);
  w.push_back(sum_);
  w.push_back(min_);
  w.push_back(max_);
  return w;
}

Histogram Histogram::from_words(const std::vector<std::uint64_t>& words, std::size_t offset) {
  Histogram h;
  const auto first = words.begin() + static_cast<std::ptrdiff_t>(offset);
  const auto last = first + kBuckets;
  if (std::any_of(first, last, [](std::uint64_t c) { return c != 0; })) {
    h.allocate();
    std::copy(first, last, h.counts_->begin());
  }
  h.count_ = words[offset + kBuckets];
  h.sum_ = words[offset + kBuckets + 1];
  h.min_ = words[offset + kBuckets + 2];
  h.max_ = words[offset + kBuckets + 3];
  return h;
}

}  // namespace trainio::metrics
