#include "capture/histogram.hpp"

#include <bit>
#include <cmath>

namespace trainio::capture {

int LogHistogram::bucket(std::uint64_t v) {
  if (v < 2) return static_cast<int>(v);
  // Integer octave, then the quarter inside it from the two bits below the top one.
  const int octave = 63 - std::countl_zero(v);
  const int quarter = octave >= 2 ? static_cast<int>((v >> (octave - 2)) & 3) : static_cast<int>((v << (2 - octave)) & 3);
  const int b = 2 + (octave - 1) * kPerOctave + quarter;
  return b < kBuckets ? b : kBuckets - 1;
}

std::uint64_t LogHistogram::lower(int b) {
  if (b < 2) return static_cast<std::uint64_t>(b);
  const int octave = (b - 2) / kPerOctave + 1, quarter = (b - 2) % kPerOctave;
  const std::uint64_t base = std::uint64_t{1} << octave;
  return base + (octave >= 2 ? (static_cast<std::uint64_t>(quarter) << (octave - 2)) : static_cast<std::uint64_t>(quarter) * base / 4);
}

void LogHistogram::merge(const LogHistogram& o) {
  for (int i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  total_ += o.total_;
}

std::uint64_t LogHistogram::quantile(double q) const {
  if (total_ == 0) return 0;
  const double want = q * static_cast<double>(total_);
  double seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += static_cast<double>(counts_[i]);
    if (seen >= want && counts_[i] > 0) return lower(i);
  }
  return lower(kBuckets - 1);
}

int LogHistogram::mode() const {
  int best = -1;
  for (int i = 0; i < kBuckets; ++i)
    if (counts_[i] > 0 && (best < 0 || counts_[i] > counts_[best])) best = i;
  return best;
}

double octaves_apart(const LogHistogram& a, const LogHistogram& b) {
  if (a.total() == 0 || b.total() == 0) return -1;
  double cum = 0, distance = 0;
  for (int i = 0; i < LogHistogram::kBuckets; ++i) {
    cum += static_cast<double>(a.count(i)) / static_cast<double>(a.total()) -
           static_cast<double>(b.count(i)) / static_cast<double>(b.total());
    distance += std::fabs(cum);
  }
  return distance / LogHistogram::kPerOctave;
}

}  // namespace trainio::capture
