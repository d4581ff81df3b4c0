#include <catch2/catch.hpp>

#include <limits>

#include "util/checked.hpp"

using namespace trainio::util;

TEST_CASE("checked multiply and add refuse results above 2^63 - 1") {
  CHECK(checked_mul(200, 4096) == 819200u);
  CHECK(checked_mul(0, ~0ULL) == 0u);
  CHECK_FALSE(checked_mul(4294967296ULL, 4294967296ULL));  // 2^64 wraps to 0 unchecked
  CHECK_FALSE(checked_mul(1ULL << 32, 1ULL << 31));         // exactly 2^63
  CHECK(checked_mul((1ULL << 31) - 1, 1ULL << 32) == ((1ULL << 31) - 1) << 32);
  CHECK(checked_add(kMaxCount - 1, 1) == kMaxCount);
  CHECK_FALSE(checked_add(kMaxCount, 1));
  CHECK_FALSE(checked_add(~0ULL, 0));
  CHECK(saturating_add(kMaxCount, 5) == kMaxCount);
}

TEST_CASE("a double becomes a count only when it is one") {
  CHECK(to_count(4096.0) == 4096u);
  CHECK(to_count(0.0) == 0u);
  CHECK_FALSE(to_count(-1.0));
  CHECK_FALSE(to_count(1.5));
  CHECK_FALSE(to_count(1e19));
  CHECK_FALSE(to_count(1e300));
  CHECK_FALSE(to_count(9223372036854775808.0));  // 2^63
  CHECK(to_count(9223372036854774784.0) == 9223372036854774784ULL);  // the largest double below 2^63
  CHECK_FALSE(to_count(std::numeric_limits<double>::infinity()));
  CHECK_FALSE(to_count(std::numeric_limits<double>::quiet_NaN()));
  CHECK(to_int64(-8.0) == -8);
  CHECK_FALSE(to_int64(-1e19));
  CHECK_FALSE(to_int64(0.5));
}
