#pragma once
// How the training loop waits for its next batch: it polls, then yields, for as long as
// util/wait_policy.hpp says, and only then blocks on the loader's condition variable.
//
// Why not block at once: a reader thread that completes a batch the training loop sleeps on must
// wake it, and waking a thread that sleeps on another core is a system call plus an
// inter-processor interrupt. On the 2-core virtual machine trainio is developed on that cost the
// reader 30-45 us per batch: 7-10% of a 1 MiB x 8 batch read from the page cache, a quarter of a
// 4 KiB x 64 one; fio, which has no training loop, pays nothing of the kind. A training loop that
// is polling when its batch completes costs the reader nothing (its notify finds no sleeper).
// Polling costs CPU, so it is bounded (2 ms per batch) and measured: polling_cpu_ns() is the
// calling thread's CPU time spent polling, which the phase reports apart from the reading cost.

#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <utility>

#include "util/clock.hpp"
#include "util/proc_stats.hpp"
#include "util/wait_policy.hpp"

namespace trainio::engine {

class BatchWait {
 public:
  // `budget_ns`: how long a wait polls before it blocks (tests shorten or lengthen it).
  explicit BatchWait(std::int64_t budget_ns = util::WaitPolicy::yield_ns) : budget_ns_(budget_ns) {}

  // A reader thread changed what the waiter waits for: tells a polling waiter and wakes a blocked
  // one. Call with the loader's lock held.
  void signal(std::condition_variable& cv) {
    progress_.fetch_add(1, std::memory_order_release);
    cv.notify_all();
  }

  // Returns, with `lock` (the loader's, held) held, once ready() (evaluated under the lock) is true.
  template <typename Ready>
  void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Ready ready) {
    if (ready()) return;
    const std::int64_t start = util::now_ns(), cpu_start = util::thread_cpu_ns();
    for (bool in_budget = true; in_budget;) {
      const std::uint64_t seen = progress_.load(std::memory_order_acquire);  // under the lock: nothing missed
      lock.unlock();
      while (progress_.load(std::memory_order_acquire) == seen) {
        const std::int64_t waited = util::now_ns() - start;
        if (waited >= budget_ns_) {
          in_budget = false;
          break;
        }
        // Bare polls first, then polls that let any runnable thread (a reader) have the core.
        if (util::wait_step(waited, false).mode != util::WaitMode::poll) sched_yield();
      }
      lock.lock();
      if (ready()) break;
    }
    polling_cpu_ns_ += util::thread_cpu_ns() - cpu_start;
    cv.wait(lock, ready);
  }

  // CPU time the waiting thread spent polling since the last call.
  std::int64_t take_polling_cpu_ns() { return std::exchange(polling_cpu_ns_, 0); }

 private:
  const std::int64_t budget_ns_;
  alignas(64) std::atomic<std::uint64_t> progress_{0};  // on a line of its own: polled back to back
  std::int64_t polling_cpu_ns_ = 0;                     // the waiting thread's only
};

}  // namespace trainio::engine
