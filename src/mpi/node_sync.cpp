#include "mpi/node_sync.hpp"

#include <linux/futex.h>
#include <mpi.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <memory>
#include <new>

#include "mpi/comm_backend.hpp"
#include "util/clock.hpp"
#include "util/wait_policy.hpp"

namespace trainio::mpi {

// One cache line each, so that arrivals do not bounce the line the sleepers wait on.
struct NodeSync::Shared {
  alignas(64) std::atomic<std::int64_t> value;       // this round's reduction so far; kEmpty before the first
  alignas(64) std::atomic<std::uint32_t> arrived;     // ranks in this round so far
  alignas(64) std::atomic<std::uint32_t> generation;  // the futex word: rounds completed
  std::atomic<std::int64_t> result;                   // the last round's value, set before `generation` moves
};

namespace {

constexpr std::int64_t kEmpty = INT64_MIN;  // no int reduces to it

static_assert(std::atomic<std::uint32_t>::is_always_lock_free && sizeof(std::atomic<std::uint32_t>) == 4,
              "the futex word must be a plain 32-bit integer");

std::int64_t combine(std::int64_t so_far, std::int64_t v, ReduceOp op) {
  if (so_far == kEmpty) return v;
  switch (op) {
    case ReduceOp::sum: return so_far + v;
    case ReduceOp::min: return std::min(so_far, v);
    case ReduceOp::max: return std::max(so_far, v);
  }
  return v;
}

// Not FUTEX_PRIVATE: the word lives in memory that other processes map.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  // A bounded sleep: nothing is lost if a wake-up is (the loop looks again), and a signal's
  // EINTR returns here the same way.
  timespec timeout{0, 100'000'000};
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected, &timeout, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

int cores_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace

struct NodeSync::Window {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Win win = MPI_WIN_NULL;
};

std::unique_ptr<NodeSync> NodeSync::create() {
  int world = 0;
  if (MPI_Comm_size(MPI_COMM_WORLD, &world) != MPI_SUCCESS || world < 2) return nullptr;
  auto window = std::make_unique<Window>();
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &window->node) != MPI_SUCCESS)
    return nullptr;
  int node_size = 0, node_rank = 0;
  MPI_Comm_size(window->node, &node_size);
  MPI_Comm_rank(window->node, &node_rank);
  // The same answer on every rank: each sees the whole job on its host, or none does.
  if (node_size != world) {
    MPI_Comm_free(&window->node);
    return nullptr;
  }
  MPI_Comm_set_errhandler(window->node, MPI_ERRORS_RETURN);
  void* mine = nullptr;
  // Room to align the block to a cache line: MPI's window need not start at one.
  constexpr std::size_t kBytes = sizeof(Shared) + alignof(Shared);
  const MPI_Aint bytes = node_rank == 0 ? static_cast<MPI_Aint>(kBytes) : 0;
  int ok = MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, window->node, &mine, &window->win) == MPI_SUCCESS;
  void* base = nullptr;
  if (ok) {
    MPI_Aint size = 0;
    int unit = 0;
    ok = MPI_Win_shared_query(window->win, 0, &size, &unit, &base) == MPI_SUCCESS && base != nullptr &&
         size >= static_cast<MPI_Aint>(kBytes);
    if (ok) {
      std::size_t space = kBytes;
      base = std::align(alignof(Shared), sizeof(Shared), base, space);
      ok = base != nullptr;
    }
  }
  if (node_rank == 0 && ok) {
    auto* s = new (base) Shared;
    s->value.store(kEmpty);
    s->arrived.store(0);
    s->generation.store(0);
    s->result.store(0);
  }
  // Every rank uses the shared memory, or none: one failure anywhere and MPI's collectives serve.
  int all_ok = 0;
  if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, window->node) != MPI_SUCCESS) all_ok = 0;
  if (!all_ok) {
    if (window->win != MPI_WIN_NULL) MPI_Win_free(&window->win);
    MPI_Comm_free(&window->node);
    return nullptr;
  }
  const bool core_each = node_size <= cores_available();
  return std::unique_ptr<NodeSync>(new NodeSync(std::move(window), static_cast<Shared*>(base), node_size, core_each));
}

NodeSync::NodeSync(std::unique_ptr<Window> window, Shared* shared, int ranks, bool core_each)
    : window_(std::move(window)), shared_(shared), ranks_(ranks), core_each_(core_each) {}

NodeSync::~NodeSync() {
  MPI_Win_free(&window_->win);
  MPI_Comm_free(&window_->node);
}

int NodeSync::reduce(int v, ReduceOp op) {
  Shared& s = *shared_;
  // Read before arriving: the round cannot complete, and the word move, until this rank arrives.
  const std::uint32_t round = s.generation.load(std::memory_order_acquire);
  std::int64_t so_far = s.value.load(std::memory_order_relaxed);
  while (!s.value.compare_exchange_weak(so_far, combine(so_far, v, op), std::memory_order_relaxed)) {
  }
  // The arrivals' read-modify-writes chain, so the last one sees every rank's value.
  if (s.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<std::uint32_t>(ranks_)) {
    const std::int64_t result = s.value.exchange(kEmpty, std::memory_order_relaxed);
    s.result.store(result, std::memory_order_relaxed);
    s.arrived.store(0, std::memory_order_relaxed);
    s.generation.store(round + 1, std::memory_order_release);
    futex_wake_all(s.generation);
    return static_cast<int>(result);
  }
  // Poll a little before sleeping: ranks whose compute ends together arrive within microseconds,
  // sooner than a sleeper wakes (50-100 us on a virtual machine). With more ranks than cores, a
  // yield between polls lets a rank that has yet to arrive run.
  const std::int64_t start = util::now_ns();
  while (s.generation.load(std::memory_order_acquire) == round && util::now_ns() - start < util::WaitPolicy::spin_ns) {
    if (!core_each_) sched_yield();
  }
  while (s.generation.load(std::memory_order_acquire) == round) futex_wait(s.generation, round);
  // `result` cannot change again before this rank arrives at the next round.
  return static_cast<int>(s.result.load(std::memory_order_relaxed));
}

}  // namespace trainio::mpi
