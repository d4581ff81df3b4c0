#include "storage/in_flight.hpp"

#include <array>
#include <atomic>

namespace trainio::storage {

namespace {

// One mark per thread, from a fixed table: no allocation or lock on the hot path, and the
// watchdog can read every mark without coordinating with the threads.
struct Mark {
  std::atomic<bool> claimed{false};
  std::atomic<std::int64_t> start_ns{0};  // 0: in no call
  std::atomic<const std::string*> path{nullptr};
  std::atomic<std::uint8_t> op{0};
};

constexpr std::size_t kMarks = 4096;  // threads with storage calls at once; more go unwatched
std::array<Mark, kMarks> marks;
std::atomic<double> watched_timeout{0};

// The calling thread's mark, claimed at its first call and released when it exits.
class ThreadMark {
 public:
  ThreadMark() {
    for (auto& m : marks) {
      bool expected = false;
      if (m.claimed.compare_exchange_strong(expected, true)) {
        mark_ = &m;
        return;
      }
    }
  }
  ~ThreadMark() {
    if (!mark_) return;
    mark_->start_ns.store(0);
    mark_->claimed.store(false);
  }
  Mark* get() const { return mark_; }

 private:
  Mark* mark_ = nullptr;
};

Mark* this_thread_mark() {
  thread_local ThreadMark mark;
  return mark.get();
}

}  // namespace

InFlightCall::InFlightCall(Op op, const std::string& path, std::int64_t start_ns) {
  Mark* m = this_thread_mark();
  if (!m || m->start_ns.load(std::memory_order_relaxed) != 0) return;  // an outer call is marked already
  m->op.store(static_cast<std::uint8_t>(op), std::memory_order_relaxed);
  m->path.store(&path, std::memory_order_relaxed);
  m->start_ns.store(start_ns > 0 ? start_ns : 1, std::memory_order_release);
  marked_ = true;
}

InFlightCall::~InFlightCall() {
  if (marked_) this_thread_mark()->start_ns.store(0, std::memory_order_release);
}

std::optional<CallInFlight> call_in_flight_since(std::int64_t started_before_ns) {
  const Mark* oldest = nullptr;
  std::int64_t oldest_start = started_before_ns;
  for (const auto& m : marks) {
    if (!m.claimed.load(std::memory_order_relaxed)) continue;
    const std::int64_t start = m.start_ns.load(std::memory_order_acquire);
    if (start != 0 && start < oldest_start) {
      oldest = &m;
      oldest_start = start;
    }
  }
  if (!oldest) return std::nullopt;
  // Only a call stuck for the watchdog's whole timeout gets here, and its thread is still inside
  // it, so the path it named is alive; a mark that changed meanwhile is dropped.
  const std::string* path = oldest->path.load(std::memory_order_relaxed);
  CallInFlight call{static_cast<Op>(oldest->op.load(std::memory_order_relaxed)), path ? *path : std::string(),
                    oldest_start};
  if (oldest->start_ns.load(std::memory_order_acquire) != oldest_start) return std::nullopt;
  return call;
}

void set_stall_timeout(double seconds) { watched_timeout.store(seconds); }
double stall_timeout() { return watched_timeout.load(); }

}  // namespace trainio::storage
