#include "util/rng.hpp"

#include <cmath>
#include <cstring>

namespace trainio::util {

namespace {
__extension__ typedef unsigned __int128 u128;  // GCC/Clang extension, for Lemire's method
}  // namespace

Rng::Rng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& word : s_) {
    x = mix64(x);
    word = x;
  }
  if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 1;  // the all-zero state is a fixed point
}

std::uint64_t Rng::below(std::uint64_t n) {
  if (n <= 1) return 0;
  u128 m = static_cast<u128>(next()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(next()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double Rng::normal() {
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

void Rng::fill(void* data, std::size_t size) {
  auto* out = static_cast<unsigned char*>(data);
  // Four words per iteration keeps the dependency chain short enough to run near memory speed.
  while (size >= 32) {
    const std::uint64_t w[4] = {next(), next(), next(), next()};
    std::memcpy(out, w, 32);
    out += 32;
    size -= 32;
  }
  while (size > 0) {
    const std::uint64_t w = next();
    const std::size_t n = size < 8 ? size : 8;
    std::memcpy(out, &w, n);
    out += n;
    size -= n;
  }
}

}  // namespace trainio::util
