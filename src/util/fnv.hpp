#pragma once
// FNV-1a, 64 bits: a fast, stable hash of bytes (the same value on every machine and run), for
// identities written into results and compared across runs.

#include <cstdint>
#include <string_view>

namespace trainio::util {

inline constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL;

// Continues hash `h` over `bytes`; start from kFnvOffset.
inline std::uint64_t fnv1a(std::uint64_t h, std::string_view bytes) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace trainio::util
