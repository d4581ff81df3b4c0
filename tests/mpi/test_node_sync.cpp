#include <catch2/catch.hpp>

#include <mpi.h>

#include <climits>
#include <memory>

#include "mpi/comm_backend.hpp"
#include "mpi/node_sync.hpp"
#include "util/clock.hpp"

using namespace trainio;

namespace {

// What every rank's value is in round `i`: different per rank and round, negative too.
int value_of(int rank, int i) { return ((rank * 7919 + i * 104729) % 2001) - 1000; }

}  // namespace

TEST_CASE("the ranks of one host reduce through shared memory, round after round, whoever is late") {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const auto sync = mpi::NodeSync::create();
  if (size == 1) {
    CHECK(sync == nullptr);  // nothing to share: MPI's own collectives
    return;
  }
  REQUIRE(sync != nullptr);  // the tests run on one host
  const mpi::ReduceOp ops[] = {mpi::ReduceOp::min, mpi::ReduceOp::max, mpi::ReduceOp::sum};
  int wrong = 0;
  for (int i = 0; i < 3000; ++i) {
    // Now and then one rank arrives late, past the other ranks' polling into their sleep.
    if (i % 500 == 7 && rank == (i / 500) % size) util::sleep_until_ns(util::now_ns() + 3'000'000);
    const mpi::ReduceOp op = ops[i % 3];
    long expected = op == mpi::ReduceOp::min ? INT_MAX : op == mpi::ReduceOp::max ? INT_MIN : 0;
    for (int r = 0; r < size; ++r) {
      const long v = value_of(r, i);
      expected = op == mpi::ReduceOp::min ? std::min(expected, v) : op == mpi::ReduceOp::max ? std::max(expected, v) : expected + v;
    }
    if (sync->reduce(value_of(rank, i), op) != expected) ++wrong;
  }
  CHECK(wrong == 0);
  // The extremes of int survive (the empty marker is outside them).
  CHECK(sync->reduce(rank == 0 ? INT_MIN : 0, mpi::ReduceOp::min) == INT_MIN);
  CHECK(sync->reduce(rank == size - 1 ? INT_MAX : 0, mpi::ReduceOp::max) == INT_MAX);
}
