#include <catch2/catch.hpp>

#include <algorithm>

#include "format/format.hpp"

using namespace trainio;

TEST_CASE("the shares of a file written by all ranks cover it once, the largest known to every rank") {
  // largest_share() replaces an all-reduce: every rank must compute the same number of rounds.
  for (std::uint64_t samples : {0ull, 1ull, 3ull, 10ull, 1024ull, 1000003ull}) {
    for (int ranks : {1, 2, 3, 4, 7, 64, 1000}) {
      std::uint64_t next = 0, largest = 0;
      for (int r = 0; r < ranks; ++r) {
        const format::SampleRange s = format::share_of(samples, r, ranks);
        REQUIRE(s.first == next);
        next = s.last;
        largest = std::max(largest, s.last - s.first);
      }
      CHECK(next == samples);
      CHECK(format::largest_share(samples, ranks) == largest);
    }
  }
}
