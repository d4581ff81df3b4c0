#include "engine/together.hpp"

#include <fmt/format.h>

namespace trainio::engine {

void settle(const mpi::Comm& comm, int failing_rank, std::exception_ptr failure) {
  if (failing_rank < 0) return;
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
  throw Error(ErrorKind::peer, fmt::format("stopped because rank {} failed", failing_rank)).mark_settled();
}

}  // namespace trainio::engine
