#pragma once
// glibc's stdio FILE (fseek/fread/ftell on a read-only stream), re-enacted on an instrumented
// storage::File. numpy reads .npy files this way: it dups Python's descriptor, fdopen()s it and
// fread()s the array, so the storage sees glibc's block-aligned seeks and reads.

#include <cstdint>
#include <vector>

#include "storage/file.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

class StdioFile {
 public:
  // numpy's dup and fdopen of `raw` (fcntl F_DUPFD_CLOEXEC, F_GETFL): a new stream on the copy,
  // in the memory of the last one (the buffer is kept).
  void fdopen_dup_of(storage::File& raw);

  // ftell(): the first one asks the kernel (lseek(0, SEEK_CUR)); later ones are answered from
  // the stream's state.
  std::uint64_t tell();
  // fseek(offset, SEEK_SET / SEEK_CUR): glibc seeks the kernel to the block boundary below the
  // target and reads up to the target (exactly, when the buffer is empty; a whole buffer
  // otherwise).
  void seek(std::int64_t offset, int whence);
  // fread(): drains the buffer, reads whole buffers straight into `dest`, refills for the tail.
  std::size_t read(void* dest, std::size_t n);
  // fclose().
  void close() { file_.close(); }

 private:
  void allocate();  // _IO_file_doallocate: fstat for st_blksize, buffer of min(st_blksize, 8192)
  std::size_t refill();

  storage::File file_;
  util::Bytes buffer_;
  std::size_t size_ = 0;          // buffer size S
  std::uint64_t offset_ = 0;      // kernel offset (glibc's _offset)
  bool offset_known_ = false;
  std::size_t read_ptr_ = 0, read_end_ = 0;  // valid bytes [read_ptr_, read_end_) of buffer_
};

}  // namespace trainio::format
