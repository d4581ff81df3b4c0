#include "metrics/live_bytes.hpp"

#include <array>
#include <atomic>
#include <cstddef>

namespace trainio::metrics {

namespace {

struct alignas(64) Slot {
  std::atomic<std::uint64_t> read{0}, written{0};
};
// More threads than slots share slots: still correct (atomic adds), only less private.
constexpr std::size_t kSlots = 64;
std::array<Slot, kSlots> slots;
std::atomic<std::size_t> next_slot{0};

Slot& my_slot() {
  thread_local Slot& slot = slots[next_slot.fetch_add(1, std::memory_order_relaxed) % kSlots];
  return slot;
}

}  // namespace

void add_live_read(std::uint64_t bytes) { my_slot().read.fetch_add(bytes, std::memory_order_relaxed); }

void add_live_written(std::uint64_t bytes) { my_slot().written.fetch_add(bytes, std::memory_order_relaxed); }

LiveBytes live_bytes() {
  LiveBytes sum;
  for (const Slot& s : slots) {
    sum.read += s.read.load(std::memory_order_relaxed);
    sum.written += s.written.load(std::memory_order_relaxed);
  }
  return sum;
}

}  // namespace trainio::metrics
