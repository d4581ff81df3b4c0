#include <catch2/catch.hpp>

#include "util/wait_policy.hpp"

using namespace trainio::util;

TEST_CASE("a short wait for a collective polls and never sleeps") {
  for (const bool mpi_yields : {false, true}) {
    CHECK(wait_step(0, mpi_yields).mode == WaitMode::poll);
    CHECK(wait_step(WaitPolicy::spin_ns - 1, mpi_yields).mode == WaitMode::poll);
  }
  // The whole budget a per-step barrier may need on a busy machine stays awake: a sleep lasts at
  // least ~100 us on a VM, five times the target latency.
  for (std::int64_t waited = 0; waited < 1'000'000; waited += 1'000) {
    CHECK(wait_step(waited, false).mode != WaitMode::sleep);
    CHECK(wait_step(waited, true).mode != WaitMode::sleep);
  }
}

TEST_CASE("after the spin phase a wait yields the core, unless MPI's own progress yields already") {
  CHECK(wait_step(WaitPolicy::spin_ns, false).mode == WaitMode::yield);
  CHECK(wait_step(WaitPolicy::yield_ns - 1, false).mode == WaitMode::yield);
  CHECK(wait_step(WaitPolicy::spin_ns, true).mode == WaitMode::poll);
  CHECK(wait_step(WaitPolicy::yield_ns - 1, true).mode == WaitMode::poll);
}

TEST_CASE("a long wait sleeps, for an eighth of the time waited, between 100 us and 1 ms") {
  for (const bool mpi_yields : {false, true}) {
    const auto first = wait_step(WaitPolicy::yield_ns, mpi_yields);
    CHECK(first.mode == WaitMode::sleep);
    CHECK(first.sleep_ns == 250'000);  // 2 ms / 8
    CHECK(wait_step(4'000'000, mpi_yields).sleep_ns == 500'000);
    CHECK(wait_step(1'000'000'000, mpi_yields).sleep_ns == 1'000'000);  // a one-second wait: capped
  }
  // The phases are ordered and the bounds are sane, whatever the constants become.
  STATIC_REQUIRE(WaitPolicy::spin_ns < WaitPolicy::yield_ns);
  STATIC_REQUIRE(WaitPolicy::min_sleep_ns <= WaitPolicy::max_sleep_ns);
  STATIC_REQUIRE(WaitPolicy::yield_ns >= 1'000'000);  // sleeps only once a wait is long
}

TEST_CASE("a rank waiting a whole second wakes rarely enough not to burn a core") {
  // Wake-ups of the sleep phase over one second, as the policy schedules them.
  std::int64_t waited = WaitPolicy::yield_ns;
  int wakeups = 0;
  while (waited < 1'000'000'000) {
    const auto step = wait_step(waited, false);
    REQUIRE(step.mode == WaitMode::sleep);
    REQUIRE(step.sleep_ns > 0);
    waited += step.sleep_ns;
    ++wakeups;
  }
  CHECK(wakeups < 1100);
  CHECK(wakeups > 900);  // and it still looks about once a millisecond
}
