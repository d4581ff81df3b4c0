#include "util/permutation.hpp"

#include <bit>

#include "util/rng.hpp"

namespace trainio::util {

Permutation::Permutation(std::uint64_t n, std::uint64_t seed) : n_(n) {
  // A balanced Feistel network over the smallest even-bit domain that covers [0, n); values that
  // land outside [0, n) are walked again ("cycle walking"), which keeps the map a bijection.
  const int bits = n <= 1 ? 0 : std::bit_width(n - 1);
  half_bits_ = (bits + 1) / 2;
  half_mask_ = half_bits_ == 0 ? 0 : (~0ULL >> (64 - half_bits_));
  std::uint64_t k = seed;
  for (auto& key : keys_) {
    k = mix64(k + 0x632be59bd9b4e019ULL);
    key = k;
  }
}

std::uint64_t Permutation::feistel(std::uint64_t x) const {
  std::uint64_t left = x >> half_bits_;
  std::uint64_t right = x & half_mask_;
  for (const std::uint64_t key : keys_) {
    const std::uint64_t next_right = left ^ (mix64(right ^ key) & half_mask_);
    left = right;
    right = next_right;
  }
  return (left << half_bits_) | right;
}

std::uint64_t Permutation::operator()(std::uint64_t index) const {
  if (n_ <= 1) return index;
  std::uint64_t y = feistel(index);
  while (y >= n_) y = feistel(y);
  return y;
}

}  // namespace trainio::util
