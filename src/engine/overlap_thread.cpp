#include "engine/overlap_thread.hpp"

#include <utility>

#include "util/error.hpp"

namespace trainio::engine {

OverlapThread::~OverlapThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void OverlapThread::start(format::TaskRef task) {
  {
    std::lock_guard lock(mutex_);
    if (running_) throw internal_error("OverlapThread: a task was started before the previous one was waited for");
    task_ = task;
    running_ = true;
    error_ = nullptr;
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { serve(); });
  changed_.notify_all();
}

void OverlapThread::wait() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !task_; });
  running_ = false;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void OverlapThread::serve() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || task_; });
    if (!task_) return;  // stopping, nothing left to run
    lock.unlock();
    std::exception_ptr error;
    try {
      (*task_)();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    task_.reset();
    changed_.notify_all();
  }
}

}  // namespace trainio::engine
