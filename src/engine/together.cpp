#include "engine/together.hpp"

#include <fmt/format.h>

#include "util/stop_request.hpp"

namespace trainio::engine {

bool stop_asked(const mpi::Comm& comm, metrics::RankRecord& record, std::uint64_t epoch, const char* next) {
  if (!comm.vote(true, util::stop_signal() != 0).stop) return false;
  record.stop_signal = static_cast<int>(comm.max(static_cast<std::int64_t>(util::stop_signal())));
  record.stop_epoch = epoch;
  record.stop_phase = next;
  return true;
}

void settle(const mpi::Comm& comm, int failing_rank, std::exception_ptr failure) {
  if (failing_rank < 0) return;
  // Every rank learns the failing rank's exit code, so the whole job exits with it (mpirun and
  // srun report the first non-zero code they see, which may be any rank's).
  std::int64_t code = 0;
  if (failing_rank == comm.rank() && failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const Error& e) {
      code = exit_code(e.kind());
    } catch (...) {
      code = 1;
    }
  }
  code = comm.max(code);
  if (failing_rank == comm.rank() && failure) {
    try {
      std::rethrow_exception(failure);
    } catch (Error& e) {
      e.with_rank(comm.rank()).mark_settled();
      throw;
    } catch (const std::exception& e) {
      throw Error(ErrorKind::internal, e.what()).with_rank(comm.rank()).mark_settled();
    }
  }
  throw Error(ErrorKind::peer, fmt::format("stopped because rank {} failed", failing_rank))
      .with_peer_exit_code(static_cast<int>(code))
      .mark_settled();
}

}  // namespace trainio::engine
