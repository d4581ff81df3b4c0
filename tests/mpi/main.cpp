// Catch2 under MPI: every rank runs every test (they are collective); rank 0 reports.
#define CATCH_CONFIG_RUNNER
// The launcher ends the other ranks with SIGTERM once one rank aborts the job; Catch's signal
// handler would report that as one more failure per rank. mpirun names a rank killed by a signal.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cstdio>
#include <iostream>

#include "mpi/comm.hpp"

namespace {

const trainio::mpi::Comm* job = nullptr;

// Fails fast: a test case that failed on one rank ends the whole job at once. Otherwise that rank
// leaves the test case early (a failed REQUIRE, an exception) and the others wait in a collective
// it never joins until CTest's timeout, or worse, the ranks match different collectives.
struct AbortJobOnFailure : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;

  bool assertionEnded(const Catch::AssertionStats& stats) override {
    const Catch::AssertionResult& r = stats.assertionResult;
    // Rank 0's reporter prints its own failures; the other ranks' reporters write to /dev/null.
    if (r.isOk() || !job || job->is_root()) return true;
    std::string what = r.hasExpression() ? r.getExpressionInMacro() : std::string();
    if (r.hasExpandedExpression()) what += " with expansion " + r.getExpandedExpression();
    if (r.hasMessage()) what += (what.empty() ? "" : ": ") + r.getMessage();
    std::fprintf(stderr, "rank %d: %s:%zu: FAILED: %s\n", job->rank(), r.getSourceInfo().file,
                 r.getSourceInfo().line, what.c_str());
    return true;
  }

  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    if (stats.totals.assertions.failed == 0 || !job) return;
    std::cout.flush();
    std::fprintf(stderr, "rank %d: test case \"%s\" failed: ending the MPI job now\n", job->rank(),
                 stats.testInfo.name.c_str());
    std::fflush(nullptr);
    job->abort(1);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(AbortJobOnFailure)

int main(int argc, char** argv) {
  trainio::mpi::Session session(&argc, &argv);
  Catch::Session catch_session;
  const auto comm = trainio::mpi::Comm::world();
  job = &comm;
  if (!comm.is_root()) catch_session.configData().outputFilename = "/dev/null";
  const int failed = catch_session.run(argc, argv);
  // A rank that failed makes the job fail even if rank 0 passed (the listener has normally ended
  // the job already; this covers failures outside a test case, such as bad arguments).
  const int any = static_cast<int>(comm.max(static_cast<std::uint64_t>(failed)));
  job = nullptr;
  return any > 0 ? 1 : 0;
}
