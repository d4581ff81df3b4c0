#pragma once
// The storage calls threads have started and not finished, for the stall watchdog
// (engine/stall_watchdog.hpp): each thread marks the call it is in (three relaxed stores before
// it, one after), and the watchdog reads every thread's mark. A call stuck in a hung mount (NFS,
// Lustre, a dead FUSE server) shows as a mark that grows old.

#include <cstdint>
#include <optional>
#include <string>

#include "storage/io_observer.hpp"

namespace trainio::storage {

// Marks the calling thread as inside `op` on `path` from `start_ns` for the scope's lifetime.
// `path` must outlive the call (the file's own path, or the caller's argument).
class InFlightCall {
 public:
  InFlightCall(Op op, const std::string& path, std::int64_t start_ns);
  ~InFlightCall();
  InFlightCall(const InFlightCall&) = delete;
  InFlightCall& operator=(const InFlightCall&) = delete;

 private:
  bool marked_ = false;
};

struct CallInFlight {
  Op op = Op::read;
  std::string path;
  std::int64_t start_ns = 0;
};

// The depth of the read of a data file whose event the calling thread is reporting to its
// observer (storage/io_observer.hpp): how many such reads through storage::File this process had
// in flight as it began, itself included; 0 outside such a report (other calls, reads reported
// after the fact: mmap, io_uring).
std::uint32_t reported_read_depth();

// The call in flight that started first, if it started before `started_before_ns` (util::now_ns).
std::optional<CallInFlight> call_in_flight_since(std::int64_t started_before_ns);

// The stall watchdog's timeout in seconds while one watches (0: none), for clients with timeouts
// of their own to keep within it (S3's).
void set_stall_timeout(double seconds);
double stall_timeout();

}  // namespace trainio::storage
