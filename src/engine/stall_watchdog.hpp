#pragma once
// A rank stuck in one storage call (a hung NFS or Lustre mount, a dead FUSE server) would hang
// the whole job, as it does DLIO. The watchdog thread looks at the calls this rank's threads
// are in (storage/in_flight.hpp) and, when one has not returned within the timeout, reports
// which call on which file, on which rank, and ends the job with exit code 1: the stuck thread
// cannot be interrupted, so the process leaves without waiting for it.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace trainio::engine {

class StallWatchdog {
 public:
  // `timeout_s` 0 watches nothing. `end_job` is called once with the message when a call
  // stalls; it must not return (it aborts the MPI job or exits the process).
  StallWatchdog(double timeout_s, int rank, std::function<void(const std::string&)> end_job);
  ~StallWatchdog();
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;

 private:
  void watch();
  double timeout_s_;
  int rank_;
  std::function<void(const std::string&)> end_job_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

// The message for a call that has been in flight for `seconds` (exposed for tests).
std::string stall_message(int rank, const std::string& call, const std::string& path, double seconds, double timeout_s);

}  // namespace trainio::engine
