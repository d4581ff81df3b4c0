#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "format/parquet/statistics.hpp"
#include "util/rng.hpp"

using namespace trainio;
using namespace trainio::format::parquet;

namespace {

// The plain definition: NaNs left out, numeric order, -0 below +0 (within a page: across pages
// extremes merge by numeric order, where the two zeros tie).
template <typename F>
std::pair<std::string, std::string> expected(const std::vector<F>& values) {
  bool any = false;
  F lo{}, hi{};
  for (const F v : values) {
    if (v != v) continue;
    auto below = [](F a, F b) { return a < b || (a == 0 && b == 0 && std::signbit(a) && !std::signbit(b)); };
    if (!any || below(v, lo)) lo = v;
    if (!any || below(hi, v)) hi = v;
    any = true;
  }
  if (!any) return {};
  return {std::string(reinterpret_cast<const char*>(&lo), sizeof(F)), std::string(reinterpret_cast<const char*>(&hi), sizeof(F))};
}

template <typename F>
std::pair<std::string, std::string> folded(config::ElementType type, const std::vector<F>& values, std::size_t pages) {
  Column c;
  c.dtype = type;
  Extremes e;
  const std::size_t per = (values.size() + pages - 1) / pages;
  for (std::size_t first = 0; first < values.size(); first += per)
    fold_values(c, reinterpret_cast<const char*>(values.data() + first), std::min(per, values.size() - first), e);
  if (!e.any) return {};
  return {e.min, e.max};
}

template <typename F, typename U>
void check_floats(config::ElementType type) {
  util::Rng rng(11);
  for (const std::size_t n : {1u, 7u, 100u, 6144u}) {
    for (const std::size_t pages : {1u, 3u}) {
      // Random bits: every exponent, NaNs and infinities included.
      std::vector<U> bits(n);
      rng.fill(bits.data(), n * sizeof(U));
      std::vector<F> values(n);
      std::memcpy(values.data(), bits.data(), n * sizeof(F));
      CHECK(folded(type, values, pages) == expected(values));
      // Signed zeros, infinities, only NaNs.
      const F inf = std::numeric_limits<F>::infinity(), nan = std::numeric_limits<F>::quiet_NaN();
      for (const std::vector<F>& special : {std::vector<F>{F(0), -F(0)}, std::vector<F>{-F(0), F(0), -F(0)},
                                            std::vector<F>{nan, -inf, F(3), inf, nan}, std::vector<F>{nan, -nan},
                                            std::vector<F>{-F(1), -F(2), nan, -F(0.5)}}) {
        const auto got = folded(type, special, 1);
        CHECK(got == expected(special));
      }
    }
  }
}

template <typename T>
void check_ints(config::ElementType type) {
  util::Rng rng(12);
  for (const std::size_t n : {1u, 9u, 6144u}) {
    std::vector<T> values(n);
    rng.fill(values.data(), n * sizeof(T));
    T lo = values[0], hi = values[0];
    for (const T v : values) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    Column c;
    c.dtype = type;
    Extremes e;
    fold_values(c, reinterpret_cast<const char*>(values.data()), n, e);
    REQUIRE(e.any);
    CHECK(e.min == std::string(reinterpret_cast<const char*>(&lo), sizeof(T)));
    CHECK(e.max == std::string(reinterpret_cast<const char*>(&hi), sizeof(T)));
  }
}

}  // namespace

TEST_CASE("Parquet float statistics: numeric order, NaNs left out, -0 below +0, across pages") {
  check_floats<float, std::uint32_t>(config::ElementType::float32);
  check_floats<double, std::uint64_t>(config::ElementType::float64);
}

TEST_CASE("Parquet integer statistics in the column's order: signed, or unsigned for uint columns") {
  check_ints<std::int32_t>(config::ElementType::int8);  // widened columns hold int32 values
  check_ints<std::uint32_t>(config::ElementType::uint32);
  check_ints<std::int64_t>(config::ElementType::int64);
  check_ints<std::uint64_t>(config::ElementType::uint64);
}
