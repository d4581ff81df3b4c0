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
  char* buffer = nullptr;  // null: one of read_all's shared buffers
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

  // Reads every request to completion (short reads are continued; end of file stops one). A
  // request without a buffer reads into one of `depth` buffers of `slot_bytes` at `slots`, each
  // reused once its read is complete: for bytes nobody keeps, a reader's memory is then the
  // reads in flight, not the batch.
  void read_all(std::span<AsyncRead> reads, char* slots = nullptr, std::size_t slot_bytes = 0);
  unsigned depth() const { return depth_; }

 private:
  struct Ring;
  void set_up();
  std::unique_ptr<Ring> ring_;
  bool ready_ = false;
  unsigned depth_;
};

}  // namespace trainio::storage
