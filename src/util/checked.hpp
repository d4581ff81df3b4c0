#pragma once
// Arithmetic on sizes and counts that refuses to wrap around. A dataset of 2^32 files of 2^32
// samples must be refused, not planned as 0 samples; a record_length_bytes of 1e300 must not
// become whatever a cast of it gives. Every size and count trainio derives stays below
// kMaxCount = 2^63, so it fits both uint64 and int64 arithmetic, and a sum of two still fits
// a uint64 (room for file headers).

#include <cmath>
#include <cstdint>
#include <optional>

namespace trainio::util {

inline constexpr std::uint64_t kMaxCount = (std::uint64_t{1} << 63) - 1;

// a * b, or nullopt when it exceeds kMaxCount.
constexpr std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  if (a == 0 || b == 0) return std::uint64_t{0};
  if (a > kMaxCount / b) return std::nullopt;
  return a * b;
}

// a + b, or nullopt when it exceeds kMaxCount.
constexpr std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  if (a > kMaxCount || b > kMaxCount - a) return std::nullopt;
  return a + b;
}

// a + b, stopping at kMaxCount (for totals that are only compared against a limit).
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  const auto sum = checked_add(a, b);
  return sum ? *sum : kMaxCount;
}

// A double that stands for a count: finite, not negative, a whole number, at most kMaxCount.
inline std::optional<std::uint64_t> to_count(double v) {
  // 2^63 is exactly representable; every double below it converts exactly.
  if (!std::isfinite(v) || v < 0 || v != std::floor(v) || v >= 9223372036854775808.0) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

// A double that stands for a signed integer: finite, whole, |v| < 2^63.
inline std::optional<std::int64_t> to_int64(double v) {
  if (!std::isfinite(v) || v != std::floor(v) || std::fabs(v) >= 9223372036854775808.0) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

}  // namespace trainio::util
