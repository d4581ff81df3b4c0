#pragma once
// The instrumented POSIX file handle. Every storage call trainio makes on data goes through here:
// each call is checked (a failure becomes a trainio::Error naming the call, the path and errno)
// and timed into the thread's IoObserver.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "storage/io_observer.hpp"
#include "storage/page_residency.hpp"

namespace trainio::storage {

enum class Access {
  read,            // O_RDONLY
  write_new,       // O_WRONLY | O_CREAT | O_EXCL: a fresh file, never truncating an existing one
  write_truncate,  // O_WRONLY | O_CREAT | O_TRUNC, as Python's open(path, "wb")
  read_write,      // O_RDWR
  read_write_new,  // O_RDWR | O_CREAT | O_EXCL (libraries that read back what they write: HDF5)
};

struct OpenOptions {
  Access access = Access::read;
  bool direct = false;        // O_DIRECT
  bool close_on_exec = true;  // O_CLOEXEC (off only to mirror libraries that do not set it)
};

class FileOpTimer;

class File {
 public:
  File() = default;
  static File open(const std::string& path, OpenOptions options = {});
  // Closes this handle (reporting a failing close) and opens `path` in its place, keeping the
  // memory of the last path: readers that open a file per sample allocate nothing for it.
  void reopen(const std::string& path, OpenOptions options = {});
  // reopen(), but a file that does not exist (ENOENT) leaves the handle closed and returns false:
  // the probe libraries such as libhdf5 make before creating a file.
  bool try_reopen(const std::string& path, OpenOptions options = {});
  ~File();
  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

  struct Stat {
    std::uint64_t size = 0;
    std::uint64_t block_size = 0;  // st_blksize: the I/O size the file system prefers
    std::uint64_t device = 0, inode = 0;
  };
  // fstat(2).
  Stat stat();
  // Size in bytes (fstat).
  std::uint64_t size() { return stat().size; }
  // ioctl(TCGETS): the terminal probe Python's open() makes on every file (isatty). On FUSE file
  // systems it can reach the file-system daemon, so framework-faithful readers issue it too.
  bool is_terminal();
  // dup(2) as Python makes it (fcntl F_DUPFD_CLOEXEC). Both handles share one file offset.
  File duplicate();
  // duplicate() into `copy` (closed first), reusing its memory.
  void duplicate_into(File& copy);
  // duplicate_into(), then fcntl(F_GETFL) as fdopen() does: the handle numpy reads through with C stdio.
  void duplicate_for_stdio_into(File& copy);

  // Reads up to `size` bytes at `offset` (one pread; may return less at end of file).
  std::size_t pread_some(void* buffer, std::size_t size, std::uint64_t offset);
  // Reads exactly `size` bytes at `offset`, looping over short reads; a file that ends early is a
  // dataset error naming the file, the offset and what was expected.
  void pread_exact(void* buffer, std::size_t size, std::uint64_t offset);
  // Sequential read at the file position (read(2)), as buffered stream readers issue it.
  std::size_t read_some(void* buffer, std::size_t size);
  // lseek(2); returns the new position.
  std::uint64_t seek(std::int64_t offset, int whence);

  // Sequential write at the file position (write(2)), looping over short writes as Python's
  // BufferedWriter does.
  void write_all(const void* buffer, std::size_t size);
  // Clears O_DIRECT on the open handle (fcntl F_SETFL), for an unaligned tail after aligned writes.
  void clear_direct();
  // Writes all of `size` bytes at `offset`, looping over short writes.
  void pwrite_all(const void* buffer, std::size_t size, std::uint64_t offset);
  void fsync();
  void fdatasync();
  // posix_fadvise(POSIX_FADV_DONTNEED) over the whole file: drops its clean pages from the page
  // cache (write dirty ones first with fdatasync).
  void drop_from_cache();
  // ftruncate(2).
  void truncate(std::uint64_t size);
  // flock(2) without waiting, as HDF5 takes it; false when another process holds the lock.
  bool try_lock(bool exclusive);
  void unlock();

  // Closes now and reports a failing close (it can carry a deferred write error).
  void close();

  // Reports `bytes` moved at `offset` by a call made outside this handle (an io_uring read of
  // its descriptor, page faults on its map) as this file's, with its access pattern.
  // `probe` is what probe_before() took before the transfer began.
  void report_transfer(Op op, std::uint64_t bytes, std::uint64_t offset, std::int64_t start_ns,
                       const ProbeTicket& probe = {});
  // Reports a call that moves no data (an fdatasync made on another thread) as this file's.
  void report_call(Op op, std::int64_t start_ns, std::int64_t ns);
  // Before a read of `size` bytes at `offset` of a data file: on the thread's sample of reads,
  // the page-cache residency of the range (the read itself would make it resident). Nothing for
  // O_DIRECT handles, whose reads bypass the cache.
  ProbeTicket probe_before(std::uint64_t offset, std::uint64_t size);
  bool direct() const { return direct_; }

 private:
  friend class FileOpTimer;
  void close_quietly() noexcept;

  int fd_ = -1;
  std::string path_;
  // For the observer: the file's identity and class, and its access pattern (Darshan's last
  // byte read and written, reset at open; the file position for read() and write()).
  std::uint64_t hash_ = 0;
  bool data_ = true;
  bool direct_ = false;  // opened with O_DIRECT (until clear_direct)
  std::uint64_t position_ = 0;
  std::uint64_t last_byte_read_ = 0, last_byte_written_ = 0;
};

}  // namespace trainio::storage
