#pragma once
// Runs one task beside a writer while the writer writes: how a writer hides generating its next
// piece behind writing the current one. The engine provides it (engine/overlap_thread.hpp):
// format/ describes bytes and calls and starts no threads of its own.

#include <functional>

namespace trainio::format {

class Overlap {
 public:
  virtual ~Overlap() = default;
  // Starts `task`; at most one task runs at a time (wait() for it before starting another).
  virtual void start(std::function<void()> task) = 0;
  // Returns when the task has finished; rethrows what it threw.
  virtual void wait() = 0;
};

// Runs `write()` while `beside` runs `task`; the task has ended when this returns or throws (it
// fills a buffer the caller may free once this is over). The writer's error wins over the task's.
template <typename Write>
void write_beside(Overlap& beside, std::function<void()> task, Write&& write) {
  beside.start(std::move(task));
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
