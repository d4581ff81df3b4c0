#pragma once
// How the training loop waits for its next batch: when the rank has a core to spare for it, it
// polls, yielding the core between polls, for up to 2 ms (util/wait_policy.hpp's yield phase),
// and only then blocks on the loader's condition variable; otherwise it blocks at once.
//
// Why not block at once: a reader thread that completes a batch the training loop sleeps on must
// wake it, and waking a thread that sleeps on another core is a system call plus an
// inter-processor interrupt. On the 2-core virtual machine trainio is developed on that cost the
// reader 30-45 us per batch: 7-10% of a 1 MiB x 8 batch read from the page cache, a quarter of a
// 4 KiB x 64 one; fio, which has no training loop, pays nothing of the kind. A training loop that
// is polling when its batch completes costs the reader nothing (its notify finds no sleeper).
//
// Polling does not pay everywhere, so a loader polls only where it measured better:
//  - with a core to spare for the training loop (polling_budget_ns): where the reader threads
//    need every core, a polling loop only notices its batch when the scheduler gives it a turn,
//    later than a woken loop would (2 readers on 2 cores, 0.5 ms of compute per step: 4% less
//    read rate, a lower AU);
//  - not for O_DIRECT reads: their readers wait on the device, so waking the loop takes nothing
//    from them, while a polling loop holds a core the kernel wants for the reads' completions
//    (on the 2-core VM, whose disk interrupts one core, 4 KiB io_uring reads at depth 32 ran at
//    0.71 of fio with the loop polling and 0.93-0.98 with it blocking);
//  - while batches come within half the budget: a longer wait makes the next one block at once
//    (storage-bound reads gain nothing from polling), and a short one polls again.
// Polling costs CPU, so it is bounded and measured: take_polling_cpu_ns() is the waiting thread's
// CPU time spent polling, which the phase reports apart from the reading cost.

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
  // `budget_ns`: how long a wait polls before it blocks; 0 blocks at once.
  explicit BatchWait(std::int64_t budget_ns = 0) : budget_ns_(budget_ns) {}

  // The budget for a rank whose loader keeps `busy_threads` threads reading, on `cores` cores: a
  // core for each of them and one for the training loop, or no polling; none for O_DIRECT reads.
  static std::int64_t polling_budget_ns(std::size_t busy_threads, std::size_t cores, bool direct_reads) {
    return !direct_reads && busy_threads + 1 <= cores ? util::WaitPolicy::yield_ns : 0;
  }

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
    if (budget_ns_ == 0) {
      cv.wait(lock, ready);
      return;
    }
    const std::int64_t start = util::now_ns();
    if (last_wait_ns_ < budget_ns_ / 2) poll(lock, ready, start);
    cv.wait(lock, ready);
    last_wait_ns_ = util::now_ns() - start;
  }

  // CPU time the waiting thread spent polling since the last call.
  std::int64_t take_polling_cpu_ns() { return std::exchange(polling_cpu_ns_, 0); }

 private:
  // Polls until ready() or the budget since `start` is spent; `lock` held on entry and return.
  template <typename Ready>
  void poll(std::unique_lock<std::mutex>& lock, Ready& ready, std::int64_t start) {
    const std::int64_t cpu_start = util::thread_cpu_ns();
    for (bool in_budget = true; in_budget;) {
      const std::uint64_t seen = progress_.load(std::memory_order_acquire);  // under the lock: nothing missed
      lock.unlock();
      while (progress_.load(std::memory_order_acquire) == seen) {
        if (util::now_ns() - start >= budget_ns_) {
          in_budget = false;
          break;
        }
        sched_yield();  // the core is meant to be spare; if a thread needs it after all, it gets it
      }
      lock.lock();
      if (ready()) break;
    }
    polling_cpu_ns_ += util::thread_cpu_ns() - cpu_start;
  }

  const std::int64_t budget_ns_;
  // How long the last wait lasted: one that outlasted half the budget says batches take longer
  // than polling would cover, so the next wait blocks at once (and, if short, polling resumes).
  std::int64_t last_wait_ns_ = 0;
  alignas(64) std::atomic<std::uint64_t> progress_{0};  // on a line of its own: polled back to back
  std::int64_t polling_cpu_ns_ = 0;                     // the waiting thread's only
};

}  // namespace trainio::engine
