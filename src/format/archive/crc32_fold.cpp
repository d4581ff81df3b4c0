#include "format/archive/crc32_fold.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace trainio::format::zip {

#if defined(__x86_64__)

bool fold_available() {
  static const bool ok = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return ok;
}

namespace {

// Constants of the bit-reflected CRC-32 for folding (Gopal et al., "Fast CRC Computation for
// Generic Polynomials Using PCLMULQDQ", Intel, 2009): x^(n) mod P for the fold distances, then
// the Barrett constants. Each 64-bit half of a 128-bit lane is multiplied by its own constant.
constexpr std::uint64_t kFold4[2] = {0x0154442bd4, 0x01c6e41596};    // 4 lanes ahead (512 bits)
constexpr std::uint64_t kFold1[2] = {0x01751997d0, 0x00ccaa009e};    // 1 lane ahead (128 bits)
constexpr std::uint64_t kFold64 = 0x0163cd6124;                       // 128 -> 64 bits
constexpr std::uint64_t kBarrett[2] = {0x01db710641, 0x01f7011641};  // P' and mu

__attribute__((target("pclmul,sse4.1"))) inline __m128i pair(const std::uint64_t c[2]) {
  return _mm_set_epi64x(static_cast<long long>(c[1]), static_cast<long long>(c[0]));
}

// lane * x^distance folded onto the next data: (lo(lane) * c0) ^ (hi(lane) * c1) ^ next.
__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i lane, __m128i constants, __m128i next) {
  const __m128i lo = _mm_clmulepi64_si128(lane, constants, 0x00);
  const __m128i hi = _mm_clmulepi64_si128(lane, constants, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

}  // namespace

__attribute__((target("pclmul,sse4.1"))) std::uint32_t crc32_fold(std::uint32_t reg, const unsigned char* data,
                                                                    std::size_t size) {
  auto load = [](const unsigned char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
  // Four 128-bit lanes advance together through the data, 64 bytes per step.
  __m128i lane[4] = {load(data), load(data + 16), load(data + 32), load(data + 48)};
  lane[0] = _mm_xor_si128(lane[0], _mm_cvtsi32_si128(static_cast<int>(reg)));
  data += 64;
  size -= 64;
  const __m128i k4 = pair(kFold4);
  for (; size >= 64; data += 64, size -= 64)
    for (int i = 0; i < 4; ++i) lane[i] = fold(lane[i], k4, load(data + 16 * i));

  // Merge the lanes, then fold any remaining 16-byte blocks in.
  const __m128i k1 = pair(kFold1);
  __m128i acc = lane[0];
  for (int i = 1; i < 4; ++i) acc = fold(acc, k1, lane[i]);
  for (; size >= 16; data += 16, size -= 16) acc = fold(acc, k1, load(data));

  // 128 -> 96 -> 64 bits.
  const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
  acc = _mm_xor_si128(_mm_srli_si128(acc, 8), _mm_clmulepi64_si128(acc, k1, 0x10));
  const __m128i k64 = _mm_set_epi64x(0, static_cast<long long>(kFold64));
  acc = _mm_xor_si128(_mm_srli_si128(acc, 4), _mm_clmulepi64_si128(_mm_and_si128(acc, low32), k64, 0x00));

  // Barrett reduction to the 32-bit remainder.
  const __m128i barrett = pair(kBarrett);
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(acc, low32), barrett, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), barrett, 0x00);
  return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(acc, t), 1));
}

#else

bool fold_available() { return false; }
std::uint32_t crc32_fold(std::uint32_t reg, const unsigned char*, std::size_t) { return reg; }

#endif

}  // namespace trainio::format::zip
