#pragma once
// Failing together. A step that any rank may fail is run on every rank, then the ranks agree on
// the outcome: if one failed, the lowest failing rank reports its error and every other rank
// stops with a quiet "peer" error. No rank is left waiting in a collective that another rank
// will never reach, and the cause is printed once.

#include <exception>
#include <utility>

#include "metrics/run_record.hpp"
#include "mpi/comm.hpp"
#include "util/error.hpp"

namespace trainio::engine {

// Rethrows `failure` on the reporting rank, or throws a peer error on the others, when the
// agreement found a failure (`failing_rank` >= 0).
void settle(const mpi::Comm& comm, int failing_rank, std::exception_ptr failure);

// Stopping together, between phases: whether a signal asked any rank to stop
// (util/stop_request.hpp); if so, records it in `record` as stopping before phase `next` of
// `epoch`. One agreement, so that every rank leaves at the same point.
bool stop_asked(const mpi::Comm& comm, metrics::RankRecord& record, std::uint64_t epoch, const char* next);

template <typename F>
void together(const mpi::Comm& comm, F&& step) {
  std::exception_ptr failure;
  try {
    std::forward<F>(step)();
  } catch (...) {
    failure = std::current_exception();
  }
  settle(comm, comm.agree(failure == nullptr), failure);
}

}  // namespace trainio::engine
