// The straggler of a phase (metrics/straggler.hpp): the rank whose batch wait the others spent
// at the step-end barrier, with the thresholds that make it one.
#include <catch2/catch.hpp>

#include <vector>

#include "metrics/straggler.hpp"
#include "metrics/summary.hpp"

using namespace trainio::metrics;

namespace {
RankFigures rank(int r, double batch_wait, double compute, double barrier, int host = 0) {
  RankFigures f;
  f.rank = r;
  f.host = host;
  f.batch_wait = batch_wait;
  f.compute = compute;
  f.barrier = barrier;
  return f;
}
}  // namespace

TEST_CASE("no straggler without at least two ranks") {
  CHECK_FALSE(find_straggler({}).known);
  const Straggler one = find_straggler({rank(0, 5, 1, 0)});
  CHECK_FALSE(one.known);
  CHECK(one.batch_wait == 0);
}

TEST_CASE("the rank that waited longest for batches held the others at the barrier") {
  // Rank 1 waited 1 s for batches; ranks 0 and 2 waited 0.2 s and spent 0.8 s at the barrier.
  const Straggler s = find_straggler({rank(0, 0.2, 1, 0.8), rank(1, 1.0, 1, 0, 3), rank(2, 0.2, 1, 0.8)});
  REQUIRE(s.known);
  CHECK(s.rank == 1);
  CHECK(s.host == 3);
  CHECK(s.batch_wait == 1.0);
  CHECK(s.others_batch_wait == Approx(0.2));
  CHECK(s.others_barrier == Approx(0.8));
  CHECK(s.held_others);
}

TEST_CASE("ranks that waited alike have no straggler that held the others") {
  const Straggler s = find_straggler({rank(0, 0.5, 1, 0.1), rank(1, 0.5, 1, 0.1), rank(2, 0.5, 1, 0.1)});
  CHECK(s.known);
  CHECK(s.rank == 0);  // the lowest rank on a tie
  CHECK(s.others_batch_wait == Approx(0.5));
  CHECK_FALSE(s.held_others);
}

TEST_CASE("an excess below its share of the mean step holds no one") {
  // Mean step 2 s: an excess of 0.09 s is under 5% of it (0.1 s), 0.11 s is over.
  const Straggler under = find_straggler({rank(0, 0.09, 1.91, 0), rank(1, 0, 1.0, 1.0)});
  CHECK(under.rank == 0);
  CHECK(under.batch_wait == 0.09);
  CHECK_FALSE(under.held_others);
  const Straggler over = find_straggler({rank(0, 0.11, 1.89, 0), rank(1, 0, 1.0, 1.0)});
  CHECK(over.held_others);
}

TEST_CASE("a straggler whose excess the others did not spend at the barrier held no one") {
  // Rank 0 waited 1 s longer, but the others spent only 0.4 s of it at the barrier (under half).
  const Straggler s = find_straggler({rank(0, 1.0, 0, 0), rank(1, 0, 1.6, 0.4)});
  CHECK(s.rank == 0);
  CHECK(s.others_barrier == Approx(0.4));
  CHECK_FALSE(s.held_others);
  // Half of it exactly is enough.
  CHECK(find_straggler({rank(0, 1.0, 0, 0), rank(1, 0, 1.5, 0.5)}).held_others);
}

TEST_CASE("the straggler's own figures do not count among the others'") {
  const Straggler s = find_straggler({rank(0, 0.1, 0, 0.3), rank(1, 0.3, 0, 0.1), rank(2, 2.0, 0, 0), rank(3, 0.2, 0, 0.2)});
  CHECK(s.rank == 2);
  CHECK(s.others_batch_wait == Approx(0.2));
  CHECK(s.others_barrier == Approx(0.2));
}
