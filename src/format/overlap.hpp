#pragma once
// Runs one task beside a writer while the writer writes: how a writer hides generating its next
// piece behind writing the current one. The engine provides it (engine/overlap_thread.hpp):
// format/ describes bytes and calls and starts no threads of its own.

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

class Overlap {
 public:
  virtual ~Overlap() = default;
  // Starts `task`, which must live until wait() returns; at most one task runs at a time (wait()
  // for it before starting another).
  virtual void start(TaskRef task) = 0;
  // Returns when the task has finished; rethrows what it threw.
  virtual void wait() = 0;
};

// Runs `write()` while `beside` runs `task`; the task has ended when this returns or throws (it
// fills a buffer the caller may free once this is over). The writer's error wins over the task's.
template <typename Task, typename Write>
void write_beside(Overlap& beside, Task&& task, Write&& write) {
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
