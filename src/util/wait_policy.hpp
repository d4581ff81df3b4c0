#pragma once
// How a thread waits for something another thread or rank will soon finish: poll, then yield, then
// sleep. A pure function of how long the wait has lasted, so it is tested without MPI or a clock.
// Two waits follow it: a rank's wait for an MPI collective it has started (mpi/comm_mpi.cpp calls
// MPI_Test between the steps it returns; the per-step barrier only in jobs across hosts: on one
// host it goes through shared memory and a futex, mpi/node_sync.hpp, and polls for spin_ns only),
// and the training loop's wait for its next batch (engine/load/batch_wait.hpp: with a core to spare it
// polls, yielding, as long as this policy's yield phase lasts, then blocks).

#include <algorithm>
#include <cstdint>

namespace trainio::util {

// Thresholds, measured with tests/bench/barrier_latency.cpp (docs/metrics.md, "The per-step
// barrier") on a 2-core virtual machine, where a sleep lasts at least ~100 us whatever is asked.
struct WaitPolicy {
  // Poll back to back this long: a barrier that every rank reaches at about the same time completes
  // within microseconds, and any sleep would add 100 us or more to it. Bare polls measured faster
  // than polls with a CPU pause instruction in between (on a VM, pause loops can exit to the
  // hypervisor).
  static constexpr std::int64_t spin_ns = 50'000;
  // Then poll with sched_yield in between until the wait has lasted this long: the core goes to any
  // runnable thread (a reader thread, another rank), yet an idle core answers within a microsecond.
  // Ranks' emulated compute ends up to a millisecond or so apart on a busy machine, and those waits
  // stay in this phase.
  static constexpr std::int64_t yield_ns = 2'000'000;
  // Only then sleep, for a fraction of the time waited so far, so a sleep adds at most about an
  // eighth to a wait that is already long, bounded to keep late replies prompt; a rank waiting
  // through a one-second compute elsewhere wakes about a thousand times, milliseconds of CPU in all.
  static constexpr std::int64_t sleep_fraction = 8;
  static constexpr std::int64_t min_sleep_ns = 100'000;
  static constexpr std::int64_t max_sleep_ns = 1'000'000;
};

enum class WaitMode { poll, yield, sleep };

struct WaitStep {
  WaitMode mode;
  std::int64_t sleep_ns = 0;  // only for WaitMode::sleep
};

// What to do before the next poll, after waiting `waited_ns` so far. `mpi_yields`: the MPI
// library's own progress already calls sched_yield when it finds nothing to do (OpenMPI's
// mpi_yield_when_idle, on by itself when ranks outnumber cores); a second yield of ours then
// measured several times slower with ranks outnumbering cores (each yield sends the rank further
// back in the kernel's queue), so the yield phase just polls.
constexpr WaitStep wait_step(std::int64_t waited_ns, bool mpi_yields) {
  if (waited_ns < WaitPolicy::spin_ns) return {WaitMode::poll};
  if (waited_ns < WaitPolicy::yield_ns) return {mpi_yields ? WaitMode::poll : WaitMode::yield};
  return {WaitMode::sleep,
          std::clamp(waited_ns / WaitPolicy::sleep_fraction, WaitPolicy::min_sleep_ns, WaitPolicy::max_sleep_ns)};
}

}  // namespace trainio::util
