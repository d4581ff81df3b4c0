#pragma once
// Fast, seeded, platform-independent randomness. The standard library's engines are portable but
// its distributions and std::shuffle are not (results differ between libstdc++ and libc++), and
// trainio's plans must be the same on every node of a cluster. So the few distributions trainio
// needs are written out here.

#include <cstddef>
#include <cstdint>

namespace trainio::util {

// SplitMix64 step: a strong 64-bit mixer, used for seeding and for hashing (seed, index) pairs.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A seed derived from a base seed and any number of indices, e.g. derive(seed, epoch, file).
constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
  return mix64(mix64(mix64(seed) ^ a) ^ (b * 0xd6e8feb86659fd93ULL));
}

// xoshiro256++: ~1 ns per 64-bit word, passes BigCrush; the workhorse for content and sampling.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n), unbiased (Lemire's multiply-shift with rejection).
  std::uint64_t below(std::uint64_t n);

  // Standard normal N(0, 1) (Box-Muller; one value per call for simplicity and determinism).
  double normal();

  // Fills `size` bytes with random content at memory speed.
  void fill(void* data, std::size_t size);

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace trainio::util
