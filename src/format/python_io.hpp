#pragma once
// CPython 3.11's file stack (io.open -> BufferedReader over FileIO), re-enacted call for call on
// an instrumented storage::File. Readers that stand for Python frameworks (numpy, zipfile) drive
// it exactly as those libraries drive Python's file object, so the storage sees the same
// system calls: the same read sizes (whole blocks of st_blksize), the same lseek(0, SEEK_CUR)
// for every tell(), the same fstat and isatty probe at open. Traces behind this model are in
// docs/io-patterns.md.

#include <cstddef>
#include <cstdio>
#include <future>
#include <utility>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/file.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

class PyBufferedFile {
 public:
  // `buffer_size` 0 means Python's choice: the file's st_blksize (DEFAULT_BUFFER_SIZE 8192 when
  // the file system reports none).
  explicit PyBufferedFile(std::size_t buffer_size = 0) : forced_buffer_size_(buffer_size) {}

  // open(path, "rb"): openat, fstat, ioctl(TCGETS), lseek(0, SEEK_CUR).
  void open(const std::string& path);
  // close(fd).
  void close();

  // BufferedReader.read(n) into `dest`; returns the bytes delivered (less only at end of file).
  std::size_t read(void* dest, std::size_t n);
  // read(n), then seek back over what was read: how np.load sniffs a file's magic bytes.
  std::size_t peek(void* dest, std::size_t n) {
    const std::size_t got = read(dest, n);
    seek(-static_cast<std::int64_t>(got), SEEK_CUR);
    return got;
  }
  // BufferedReader.readinto(b) of n bytes: what is buffered, then a raw read of all the rest when
  // it is more than the buffer, else a buffer fill.
  std::size_t readinto(void* dest, std::size_t n);
  // readinto() of n bytes that the caller does not keep (a tensor's data): the same calls, except
  // that a raw read of more than `scratch_size` is split into reads of scratch_size into
  // `scratch` (Python reads a large tensor with one read; trainio never holds a whole tensor).
  std::uint64_t readinto_discard(std::uint64_t n, char* scratch, std::size_t scratch_size);
  // BufferedReader.read1(n): buffered bytes if there are any, else one raw read of n.
  std::size_t read1(void* dest, std::size_t n);
  // BufferedReader.read() with no size: FileIO.readall(). `dest` must hold size() - tell() bytes.
  std::size_t read_all(void* dest, std::size_t capacity);
  // BufferedReader.seek(offset, whence); whence 0/1 inside the buffer costs no system call.
  std::uint64_t seek(std::int64_t offset, int whence);
  // BufferedReader.tell(): always an lseek(0, SEEK_CUR).
  std::uint64_t tell();

  // The raw descriptor underneath, for libraries that go around Python's buffer (numpy's
  // fromfile dups it and reads with C stdio, then lseeks it back).
  storage::File& raw() { return file_; }

  std::uint64_t file_size() const { return file_size_; }
  std::size_t buffer_size() const { return buffer_size_; }
  const std::string& path() const { return file_.path(); }

 private:
  std::size_t raw_read(void* dest, std::size_t n);
  std::uint64_t readinto_impl(char* dest, std::uint64_t n, char* scratch, std::size_t scratch_size);
  std::size_t minus_last_block(std::size_t n) const { return n - n % buffer_size_; }
  std::size_t readahead() const { return valid_ ? static_cast<std::size_t>(buf_start_ + buf_len_ - pos_) : 0; }
  void reset_buffer() {
    valid_ = false;
    buf_len_ = 0;
  }

  storage::File file_;
  std::size_t forced_buffer_size_;
  std::size_t buffer_size_ = 8192;
  util::Bytes buffer_;  // allocated once, grown only for a larger st_blksize
  std::uint64_t file_size_ = 0;
  std::uint64_t raw_ = 0;       // the kernel's file offset
  std::uint64_t pos_ = 0;       // the reader's logical position
  bool valid_ = false;          // buffer holds [buf_start_, buf_start_ + buf_len_)
  std::uint64_t buf_start_ = 0;
  std::size_t buf_len_ = 0;
};

// CPython 3.11's open(path, "wb") (BufferedWriter over FileIO), re-enacted call for call: the open
// (openat O_WRONLY|O_CREAT|O_TRUNC, fstat, isatty probe, lseek), writes that fit the buffer are
// copied into it, a write that does not first flushes the buffer and then, when it is larger
// than the buffer, goes to the file in one raw write; the rest is flushed at flush() or close().
class PyBufferedWriter {
 public:
  static constexpr std::size_t kPage = 4096;
  explicit PyBufferedWriter(std::size_t buffer_size = 0) : forced_buffer_size_(buffer_size) {}

  void open(const std::string& path);
  // BufferedWriter.write(b) of bytes in memory.
  void write(const void* data, std::size_t n);
  // BufferedWriter.write(b) of n bytes that `fill(dest, size)` generates piece by piece, in
  // order: a raw write larger than `chunk_size` - 4 KiB is split into writes of that size
  // (Python writes a large tensor with one write; trainio never holds a whole tensor). `chunks`
  // holds two halves of chunk_size: the next piece is generated while the previous one is being
  // written, so the generation's CPU time hides behind the storage's.
  template <typename Fill>
  void write_generated(std::uint64_t n, char* chunks, std::size_t chunk_size, Fill&& fill);
  void flush();
  // os.fsync(f.fileno()).
  void fsync() { file_.fsync(); }
  // close(): flush, then close(2).
  void close();
  std::uint64_t position() const { return written_ + used_; }
  storage::File& raw() { return file_; }

 private:
  storage::File file_;
  std::size_t forced_buffer_size_;
  std::size_t buffer_size_ = 8192;
  util::Bytes buffer_;
  std::size_t used_ = 0;        // bytes waiting in the buffer
  std::uint64_t written_ = 0;   // bytes that reached the file
};

template <typename Fill>
void PyBufferedWriter::write_generated(std::uint64_t n, char* chunks, std::size_t chunk_size, Fill&& fill) {
  if (n <= buffer_size_ - used_) {
    fill(buffer_.data() + used_, static_cast<std::size_t>(n));
    used_ += static_cast<std::size_t>(n);
    return;
  }
  flush();
  if (n <= buffer_size_) {  // fits the emptied buffer
    fill(buffer_.data(), static_cast<std::size_t>(n));
    used_ = static_cast<std::size_t>(n);
    return;
  }
  // The kernel copies into the page cache fastest when the source sits at the same offset in its
  // page as the destination in the file: start each piece at the file position's page offset
  // (each half of `chunks` has a page to spare).
  const std::size_t skew = static_cast<std::size_t>(written_ % kPage);
  chunk_size -= kPage;
  auto piece_at = [&](std::uint64_t done) {
    return n - done < chunk_size ? static_cast<std::size_t>(n - done) : chunk_size;
  };
  char* ready = chunks + skew;
  char* spare = chunks + chunk_size + kPage + skew;
  fill(ready, piece_at(0));
  for (std::uint64_t done = 0; done < n;) {
    const std::size_t piece = piece_at(done);
    const std::uint64_t after = done + piece;
    // Generate the next piece on another thread while this one goes to the file.
    std::future<void> next;
    if (after < n) next = std::async(std::launch::async, [&, after] { fill(spare, piece_at(after)); });
    try {
      file_.write_all(ready, piece);
    } catch (...) {
      if (next.valid()) next.wait();
      throw;
    }
    if (next.valid()) next.get();
    std::swap(ready, spare);
    done = after;
  }
  written_ += n;
}

}  // namespace trainio::format
