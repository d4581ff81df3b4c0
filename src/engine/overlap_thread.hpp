#pragma once
// format::Overlap on one long-lived thread, started with the first task and joined by the
// destructor: a writer overlaps every piece of every file without a thread per piece.

#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "format/overlap.hpp"

namespace trainio::engine {

class OverlapThread final : public format::Overlap {
 public:
  OverlapThread() = default;
  ~OverlapThread() override;
  OverlapThread(const OverlapThread&) = delete;
  OverlapThread& operator=(const OverlapThread&) = delete;

  void start(format::TaskRef task) override;
  void wait() override;

 private:
  void serve();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<format::TaskRef> task_;  // set while a task waits or runs
  bool running_ = false;        // a task was started and not yet waited for
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace trainio::engine
