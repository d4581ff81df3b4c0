#pragma once
// Runs one task beside a writer while the writer writes: how a writer hides generating its next
// piece behind writing the current one. The engine provides it (engine/overlap_thread.hpp):
// format/ describes bytes and calls and starts no threads of its own.

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

namespace trainio::format {

// A task to run, by reference: the caller's callable, which must outlive the task (wait()).
// Unlike std::function it never allocates, so a writer can hand one over per 1 MiB piece.
class TaskRef {
 public:
  template <typename F>
    requires(!std::is_same_v<std::remove_cv_t<F>, TaskRef>)
  TaskRef(F& task)  // an lvalue only: a temporary would be gone before the task runs
      : object_(&task), call_([](void* o) { (*static_cast<F*>(o))(); }) {}
  void operator()() const { call_(object_); }

 private:
  void* object_;
  void (*call_)(void*);
};

// Which way a writer's next piece is generated: beside the write, on the overlap's thread, or
// after it, on the writer's. Beside hides generating behind writing, but each piece then costs a
// hand-off between threads, and the writes copy bytes that sit in the other core's cache. Where
// writes are about as fast as memory (tmpfs, the page cache) that costs more than generating
// does: on the 2-core test machine NPZ generation of 4 MiB files into tmpfs took a median 146 ms
// after against 162 ms beside (20 alternating runs). Where writes wait on a device or a network,
// beside wins. So the way is chosen by what both measure end to end, file by file: each cycle of
// kCycle files starts with kTrial files written each way, the two ways in turn (so that a drift
// of the storage's speed weighs on both alike), and the rest go the way that wrote a byte faster,
// smoothed over the cycles' trials so that a lasting change of speed is followed. Until files are
// recorded, pieces go beside.
class OverlapChoice {
 public:
  enum class Way { beside, after };
  static constexpr std::uint64_t kTrial = 8, kCycle = 256;

  Way next() const;
  // A file (or any unit of writing) done the way next() said: `bytes` in `ns`, start to end.
  void record(std::uint64_t bytes, std::int64_t ns);
  // Always `way` from now on (tests, and comparing the two ways).
  void force(Way way) { forced_ = way; }
  // Nanoseconds per byte each way has measured, smoothed over its trials; 0 before its first.
  double ns_per_byte(Way way) const { return estimate_[index(way)]; }

 private:
  static int index(Way way) { return way == Way::beside ? 0 : 1; }
  std::optional<Way> forced_;
  std::uint64_t done_ = 0;  // files recorded in this cycle
  double estimate_[2] = {0, 0};
  std::int64_t trial_ns_[2] = {0, 0};  // this cycle's trial files of each way, but the first
  std::uint64_t trial_bytes_[2] = {0, 0};
};

class Overlap {
 public:
  virtual ~Overlap() = default;
  // Starts `task`, which must live until wait() returns; at most one task runs at a time (wait()
  // for it before starting another).
  virtual void start(TaskRef task) = 0;
  // Returns when the task has finished; rethrows what it threw.
  virtual void wait() = 0;
  // How the writers using this overlap generate their pieces (write_beside()).
  OverlapChoice& choice() { return choice_; }

 private:
  OverlapChoice choice_;
};

// Runs `write()` and `task`, which generates the next piece: at once, with the task on `beside`'s
// thread, or one after the other on this one, as beside.choice() says. The task has ended when
// this returns or throws (it fills a buffer the caller may free once this is over). The writer's
// error wins over the task's.
template <typename Task, typename Write>
void write_beside(Overlap& beside, Task&& task, Write&& write) {
  if (beside.choice().next() == OverlapChoice::Way::after) {
    write();
    task();
    return;
  }
  beside.start(TaskRef(task));  // `task` lives in this frame until the task has ended
  try {
    write();
  } catch (...) {
    try {
      beside.wait();
    } catch (...) {
    }
    throw;
  }
  beside.wait();
}

}  // namespace trainio::format
