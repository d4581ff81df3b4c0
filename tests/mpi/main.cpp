// Catch2 under MPI: every rank runs every test (they are collective); rank 0 reports.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "mpi/comm.hpp"

int main(int argc, char** argv) {
  trainio::mpi::Session session(&argc, &argv);
  Catch::Session catch_session;
  const auto comm = trainio::mpi::Comm::world();
  if (!comm.is_root()) catch_session.configData().outputFilename = "/dev/null";
  const int failed = catch_session.run(argc, argv);
  // A rank that failed makes the job fail even if rank 0 passed.
  const int any = static_cast<int>(comm.max(static_cast<std::uint64_t>(failed)));
  return any > 0 ? 1 : 0;
}
