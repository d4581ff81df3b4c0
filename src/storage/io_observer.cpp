#include "storage/io_observer.hpp"

namespace trainio::storage {

namespace {
thread_local IoObserver* current = nullptr;
}

const char* op_name(Op op) {
  static constexpr const char* kNames[kOpCount] = {"open",  "stat",  "read",  "write",  "seek",
                                                   "close", "fsync", "mkdir", "rename", "unlink",
                                                   "ioctl", "fcntl", "mmap",  "touch"};
  return kNames[static_cast<int>(op)];
}

void set_thread_observer(IoObserver* observer) { current = observer; }
IoObserver* thread_observer() { return current; }

}  // namespace trainio::storage
