#include <catch2/catch.hpp>

#include <unistd.h>

#include "util/clock.hpp"

using namespace trainio;

TEST_CASE("the process's start is read from the kernel onto the monotonic clock") {
  const auto start = util::process_start_ns();
  REQUIRE(start.has_value());
  const std::int64_t now = util::now_ns();
  // Before now by what this test binary has lived so far: more than nothing, within its timeout,
  // and to the kernel's tick (10 ms) plus the clocks' reading apart.
  CHECK(*start <= now + 20'000'000);
  CHECK(now - *start < 600'000'000'000);
  // The kernel's start time is fixed: asking again gives the same moment, to a tick.
  const auto again = util::process_start_ns();
  REQUIRE(again.has_value());
  CHECK(std::llabs(*again - *start) <= 2 * 1'000'000'000 / ::sysconf(_SC_CLK_TCK));
}
