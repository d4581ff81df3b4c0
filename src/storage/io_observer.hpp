#pragma once
// How the storage layer reports what it did. Every call through storage::File is timed and handed
// to the calling thread's observer (if any), which the engine installs and the metrics layer
// implements. One virtual call per storage call: cheap next to a system call.

#include <cstdint>

namespace trainio::storage {

// mmap counts mapping a file; touch counts reading mapped pages (page faults do the I/O).
enum class Op : std::uint8_t { open, stat, read, write, seek, close, fsync, mkdir, rename, unlink, ioctl, fcntl, mmap, touch };
inline constexpr int kOpCount = 14;
const char* op_name(Op op);

class IoObserver {
 public:
  virtual ~IoObserver() = default;
  virtual void on_op(Op op, std::uint64_t bytes, std::int64_t nanoseconds) = 0;
};

// The observer for storage calls made by the current thread; nullptr records nothing.
void set_thread_observer(IoObserver* observer);
IoObserver* thread_observer();

// Installs an observer for the lifetime of a scope.
class ScopedObserver {
 public:
  explicit ScopedObserver(IoObserver* observer) : previous_(thread_observer()) {
    set_thread_observer(observer);
  }
  ~ScopedObserver() { set_thread_observer(previous_); }
  ScopedObserver(const ScopedObserver&) = delete;
  ScopedObserver& operator=(const ScopedObserver&) = delete;

 private:
  IoObserver* previous_;
};

}  // namespace trainio::storage
