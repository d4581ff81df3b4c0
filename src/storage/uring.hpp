#pragma once
// Asynchronous reads with io_uring: up to `depth` reads in flight from one thread. Each read is
// reported to the thread's IoObserver like a pread (bytes, and time from submission to
// completion), so results compare across engines.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace trainio::storage {

class File;

struct AsyncRead {
  File* file = nullptr;  // read from its descriptor; the read is reported as this file's
  char* buffer = nullptr;
  std::size_t length = 0;
  std::uint64_t offset = 0;
  std::size_t done = 0;  // bytes read (less than length only at end of file)
};

class Uring {
 public:
  // The ring is set up by the first read_all(), in the thread that will use it (the ring is
  // marked single-issuer); setting it up fails with a clear error where io_uring is not allowed.
  explicit Uring(unsigned depth);
  ~Uring();
  Uring(const Uring&) = delete;
  Uring& operator=(const Uring&) = delete;

  // Reads every request to completion (short reads are continued; end of file stops one).
  void read_all(std::span<AsyncRead> reads);

 private:
  struct Ring;
  void set_up();
  std::unique_ptr<Ring> ring_;
  bool ready_ = false;
  unsigned depth_;
};

}  // namespace trainio::storage
