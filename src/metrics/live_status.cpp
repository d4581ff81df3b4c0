#include "metrics/live_status.hpp"

#include <atomic>
#include <mutex>

#include "util/clock.hpp"

namespace trainio::metrics::live {

namespace {
std::atomic<bool> on{false};
std::mutex mutex;
Snapshot current;
}  // namespace

void activate(bool state) { on.store(state, std::memory_order_relaxed); }

void begin_phase(const std::string& kind, const std::string& label, std::uint64_t total, double samples_per_unit) {
  if (!on.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(mutex);
  current = {kind, label, 0, total, 0, samples_per_unit, util::now_ns(), 0};
}

void advance(std::uint64_t units, double compute_seconds) {
  if (!on.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(mutex);
  current.done += units;
  current.compute_seconds += compute_seconds;
}

void end_phase() {
  if (!on.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(mutex);
  if (current.phase_end_ns == 0) current.phase_end_ns = util::now_ns();
}

Snapshot snapshot() {
  std::lock_guard lock(mutex);
  return current;
}

}  // namespace trainio::metrics::live
