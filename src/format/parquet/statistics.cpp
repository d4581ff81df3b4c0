#include "format/parquet/statistics.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "util/vector_clones.hpp"

namespace trainio::format::parquet {

namespace {

// Widens `e` to take in [lo, hi] (the chunk's extremes so far are kept as the column's bytes).
template <typename T>
void widen(Extremes& e, T lo, T hi) {
  if (e.any) {
    T was_lo, was_hi;
    std::memcpy(&was_lo, e.min.data(), sizeof(T));
    std::memcpy(&was_hi, e.max.data(), sizeof(T));
    lo = was_lo < lo ? was_lo : lo;
    hi = was_hi > hi ? was_hi : hi;
  }
  e.any = true;
  e.min.assign(reinterpret_cast<const char*>(&lo), sizeof(T));
  e.max.assign(reinterpret_cast<const char*>(&hi), sizeof(T));
}

template <typename T>
struct Range {
  T lo, hi;
};

// Min and max of `count` (> 0) integers: a plain loop the compiler vectorises.
template <typename T>
[[gnu::always_inline]] inline Range<T> int_range(const char* data, std::uint64_t count) {
  T lo = std::numeric_limits<T>::max(), hi = std::numeric_limits<T>::min();
  for (std::uint64_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, data + i * sizeof(T), sizeof(T));
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  return {lo, hi};
}

// Floats compared as signed integer keys in the same order: a negative float's magnitude bits
// flipped (so that -0 sorts below +0, and a larger magnitude lower), positive ones as they are.
// NaNs take the neutral key of each side, so they are never picked; no other value maps to the
// largest key, so a range still at it held only NaNs. Integer compares vectorise, and denormals in
// random content cost no floating-point assists.
template <typename S>
[[gnu::always_inline]] inline Range<S> float_key_range(const char* data, std::uint64_t count) {
  using U = std::make_unsigned_t<S>;
  constexpr S magnitude = std::numeric_limits<S>::max();
  constexpr S inf = sizeof(S) == 4 ? S(0x7f800000) : S(0x7ff0000000000000);
  S lo = std::numeric_limits<S>::max(), hi = std::numeric_limits<S>::min();
  for (std::uint64_t i = 0; i < count; ++i) {
    U u;
    std::memcpy(&u, data + i * sizeof(U), sizeof(U));
    const S s = static_cast<S>(u);
    const S nan = -static_cast<S>((s & magnitude) > inf);  // all ones for a NaN: selects by masks, which vectorise
    const S key = s ^ ((s >> (8 * sizeof(S) - 1)) & magnitude);
    lo = std::min(lo, static_cast<S>((key & ~nan) | (std::numeric_limits<S>::max() & nan)));
    hi = std::max(hi, static_cast<S>((key & ~nan) | (std::numeric_limits<S>::min() & nan)));
  }
  return {lo, hi};
}

// The loops, each built for AVX-512, AVX2 and the baseline (which has no 64-bit vector compare).
TRAINIO_VECTOR_CLONES Range<std::int32_t> range_i32(const char* d, std::uint64_t n) { return int_range<std::int32_t>(d, n); }
TRAINIO_VECTOR_CLONES Range<std::uint32_t> range_u32(const char* d, std::uint64_t n) { return int_range<std::uint32_t>(d, n); }
TRAINIO_VECTOR_CLONES Range<std::int64_t> range_i64(const char* d, std::uint64_t n) { return int_range<std::int64_t>(d, n); }
TRAINIO_VECTOR_CLONES Range<std::uint64_t> range_u64(const char* d, std::uint64_t n) { return int_range<std::uint64_t>(d, n); }
TRAINIO_VECTOR_CLONES Range<std::int32_t> keys_f32(const char* d, std::uint64_t n) { return float_key_range<std::int32_t>(d, n); }
TRAINIO_VECTOR_CLONES Range<std::int64_t> keys_f64(const char* d, std::uint64_t n) { return float_key_range<std::int64_t>(d, n); }

template <typename T>
void fold_ints(Range<T> (*range)(const char*, std::uint64_t), const char* data, std::uint64_t count, Extremes& e) {
  if (count == 0) return;
  const Range<T> r = range(data, count);
  widen(e, r.lo, r.hi);
}

template <typename F, typename S>
void fold_floats(Range<S> (*range)(const char*, std::uint64_t), const char* data, std::uint64_t count, Extremes& e) {
  if (count == 0) return;
  const Range<S> r = range(data, count);
  if (r.lo == std::numeric_limits<S>::max()) return;  // only NaNs
  constexpr S magnitude = std::numeric_limits<S>::max();
  auto value = [](S key) {  // the key's float: the mapping is its own inverse
    const S bits = key ^ ((key >> (8 * sizeof(S) - 1)) & magnitude);
    F f;
    std::memcpy(&f, &bits, sizeof(F));
    return f;
  };
  widen(e, value(r.lo), value(r.hi));
}

}  // namespace

void fold_values(const Column& c, const char* data, std::uint64_t count, Extremes& e) {
  using config::ElementType;
  switch (c.dtype) {
    case ElementType::uint32: fold_ints(range_u32, data, count, e); break;
    case ElementType::uint64: fold_ints(range_u64, data, count, e); break;
    case ElementType::int64: fold_ints(range_i64, data, count, e); break;
    case ElementType::float32: fold_floats<float>(keys_f32, data, count, e); break;
    case ElementType::float64: fold_floats<double>(keys_f64, data, count, e); break;
    case ElementType::float16: break;
    // Widened columns hold int32 values; uint8/uint16 ones are never negative, so signed order is theirs.
    default: fold_ints(range_i32, data, count, e); break;
  }
}

}  // namespace trainio::format::parquet
