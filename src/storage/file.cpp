#include "storage/file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "storage/errno_hint.hpp"
#include "storage/in_flight.hpp"
#include "storage/io_observer.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace trainio::storage {

// Times one storage call on a file and reports it to the thread's observer.
// Reads of data files this process has in flight: the depth each one starts at (itself included),
// which the bottleneck verdict sets against its latency (docs/metrics.md); and the depth of the
// read the thread is reporting (reported_read_depth()).
static std::atomic<std::uint32_t> data_reads_in_flight{0};
static thread_local std::uint32_t reporting_depth = 0;

class FileOpTimer {
 public:
  // `live`: the call runs in the timer's scope (a call reported after the fact has no depth).
  FileOpTimer(File& file, Op op, std::int64_t start = util::now_ns(), bool live = true)
      : file_(file), op_(op), start_(start), in_flight_(op, file.path_, start),
        depth_(live && op == Op::read && file.data_ ? data_reads_in_flight.fetch_add(1, std::memory_order_relaxed) + 1 : 0) {}
  ~FileOpTimer() {
    if (depth_ > 0) data_reads_in_flight.fetch_sub(1, std::memory_order_relaxed);
  }
  FileOpTimer(const FileOpTimer&) = delete;
  FileOpTimer& operator=(const FileOpTimer&) = delete;
  // A call that moves no data.
  void done(std::uint64_t bytes = 0) const {
    if (IoObserver* obs = thread_observer()) obs->on_op(event(bytes));
  }
  // A read or write of `bytes` at `offset`: Darshan's sequential and consecutive tests against
  // the last byte the previous one touched.
  void done_io(std::uint64_t bytes, std::uint64_t offset, const ProbeTicket& probe = {}) const {
    std::uint64_t& last = op_ == Op::write ? file_.last_byte_written_ : file_.last_byte_read_;  // touch: a read
    OpEvent e = event(bytes);
    e.offset = offset;
    e.has_offset = true;
    e.sequential = offset > last;
    e.consecutive = offset == last + 1;
    if (bytes > 0) last = offset + bytes - 1;
    if (op_ != Op::write) residency(probe, bytes, offset, e);  // after e's time is taken: not the read's
    if (IoObserver* obs = thread_observer()) {
      reporting_depth = depth_;
      obs->on_op(e);
      reporting_depth = 0;
    }
  }

 private:
  OpEvent event(std::uint64_t bytes) const {
    OpEvent e;
    e.op = op_;
    e.bytes = bytes;
    e.start_ns = start_;
    e.ns = util::now_ns() - start_;
    e.data = file_.data_;
    e.file = file_.hash_;
    e.path = file_.path_;
    return e;
  }
  // What the probe taken before a read says about the pages it returned. Pages past the end of
  // the file cannot be resident, so the count over the requested range holds for the returned
  // one. Pages that are still not resident after the read tell of a file system that does not
  // keep reads in the page cache (FUSE direct_io): there residency says nothing.
  void residency(const ProbeTicket& probe, std::uint64_t bytes, std::uint64_t offset, OpEvent& e) const {
    e.direct = file_.direct_;
    if (!probe.active) return;
    if (probe.error != 0) {
      e.probe_error = probe.error;
      return;
    }
    const std::uint64_t pages = pages_spanned(offset, bytes);
    e.probed_pages = static_cast<std::uint32_t>(pages);
    e.resident_pages = static_cast<std::uint32_t>(std::min(pages, probe.resident_pages));
    if (e.resident_pages == e.probed_pages) return;
    const Residency after = probe_residency(file_.fd_, offset, bytes);
    if (after.error == 0)
      e.stayed_out_pages = static_cast<std::uint32_t>(pages - std::min(pages, std::max<std::uint64_t>(after.resident_pages, e.resident_pages)));
  }

  File& file_;
  Op op_;
  std::int64_t start_;
  InFlightCall in_flight_;  // what the stall watchdog sees while the call runs
  std::uint32_t depth_;     // 0: not counted
};

std::uint32_t reported_read_depth() { return reporting_depth; }

namespace {

Error call_failed(const char* call, const std::string& path, int err, const std::string& detail = {}) {
  return Error(ErrorKind::io, fmt::format("{}('{}'{}) failed: {}", call, path, detail, std::strerror(err)),
               hint_for_errno(call, err, path));
}

int open_flags(const OpenOptions& o) {
  int flags = o.close_on_exec ? O_CLOEXEC : 0;
  switch (o.access) {
    // O_NONBLOCK: a FIFO in place of a data file would block open() until a writer came; Linux
    // ignores the flag for regular files (docs/io-patterns.md).
    case Access::read: flags |= O_RDONLY | O_NONBLOCK; break;
    case Access::write_new: flags |= O_WRONLY | O_CREAT | O_EXCL; break;
    case Access::write_truncate: flags |= O_WRONLY | O_CREAT | O_TRUNC; break;
    case Access::read_write: flags |= O_RDWR; break;
    case Access::read_write_new: flags |= O_RDWR | O_CREAT | O_EXCL; break;
  }
  if (o.direct) flags |= O_DIRECT;
  return flags;
}

}  // namespace

File File::open(const std::string& path, OpenOptions options) {
  File f;
  f.reopen(path, options);
  return f;
}

void File::reopen(const std::string& path, OpenOptions options) {
  if (!try_reopen(path, options)) throw call_failed("open", path, ENOENT);
}

bool File::try_reopen(const std::string& path, OpenOptions options) {
  close();
  const std::int64_t start = util::now_ns();
  int fd;
  {
    const InFlightCall in_flight(Op::open, path, start);
    fd = ::open(path.c_str(), open_flags(options), 0644);
  }
  if (fd < 0 && errno == ENOENT) return false;
  if (fd < 0) throw call_failed("open", path, errno);
  fd_ = fd;
  path_.assign(path);  // into the capacity the last path left: no allocation per file
  hash_ = path_hash(path_);
  data_ = is_data_file(path_);
  direct_ = options.direct;
  position_ = last_byte_read_ = last_byte_written_ = 0;
  if (IoObserver* obs = thread_observer()) {
    OpEvent e;
    e.op = Op::open;
    e.start_ns = start;
    e.ns = util::now_ns() - start;
    e.data = data_;
    e.file = hash_;
    e.path = path_;
    obs->on_op(e);
  }
  return true;
}

File::~File() { close_quietly(); }

File::File(File&& other) noexcept
    : fd_(other.fd_),
      path_(std::move(other.path_)),
      hash_(other.hash_),
      data_(other.data_),
      direct_(other.direct_),
      position_(other.position_),
      last_byte_read_(other.last_byte_read_),
      last_byte_written_(other.last_byte_written_) {
  other.fd_ = -1;
}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    close_quietly();
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    hash_ = other.hash_;
    data_ = other.data_;
    direct_ = other.direct_;
    position_ = other.position_;
    last_byte_read_ = other.last_byte_read_;
    last_byte_written_ = other.last_byte_written_;
    other.fd_ = -1;
  }
  return *this;
}

File::Stat File::stat() {
  FileOpTimer t(*this, Op::stat);
  struct stat st;
  if (::fstat(fd_, &st) != 0) throw call_failed("fstat", path_, errno);
  t.done(0);
  return {static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_blksize),
          static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

bool File::is_terminal() {
  FileOpTimer t(*this, Op::ioctl);
  termios tio;
  const bool tty = ::ioctl(fd_, TCGETS, &tio) == 0;
  t.done(0);
  return tty;
}

File File::duplicate() {
  File copy;
  duplicate_into(copy);
  return copy;
}

void File::duplicate_into(File& copy) {
  copy.close();
  FileOpTimer t(*this, Op::fcntl);
  const int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) throw call_failed("fcntl(F_DUPFD_CLOEXEC)", path_, errno);
  t.done(0);
  copy.fd_ = fd;
  copy.path_.assign(path_);  // into the copy's memory of its last path
  copy.hash_ = hash_;
  copy.data_ = data_;
  copy.direct_ = direct_;  // one open file description: the same flags
  copy.position_ = copy.last_byte_read_ = copy.last_byte_written_ = 0;
}

void File::duplicate_for_stdio_into(File& copy) {
  duplicate_into(copy);
  FileOpTimer t(copy, Op::fcntl);
  if (::fcntl(copy.fd_, F_GETFL) < 0) throw call_failed("fcntl(F_GETFL)", path_, errno);
  t.done(0);
}

std::size_t File::pread_some(void* buffer, std::size_t size, std::uint64_t offset) {
  const ProbeTicket probe = probe_before(offset, size);
  FileOpTimer t(*this, Op::read);
  ssize_t n;
  do {
    n = ::pread(fd_, buffer, size, static_cast<off_t>(offset));
  } while (n < 0 && errno == EINTR);
  if (n < 0) throw call_failed("pread", path_, errno, fmt::format(", {} bytes at {}", size, offset));
  t.done_io(static_cast<std::uint64_t>(n), offset, probe);
  return static_cast<std::size_t>(n);
}

void File::pread_exact(void* buffer, std::size_t size, std::uint64_t offset) {
  auto* out = static_cast<unsigned char*>(buffer);
  std::size_t done = 0;
  while (done < size) {
    const std::size_t n = pread_some(out + done, size - done, offset + done);
    if (n == 0) {
      throw data_error(
          fmt::format("'{}' ends at byte {}, but {} bytes were expected at offset {}", path_,
                      offset + done, size, offset),
          "the file is truncated or belongs to another dataset: regenerate it with 'trainio generate'");
    }
    done += n;
  }
}

std::size_t File::read_some(void* buffer, std::size_t size) {
  const ProbeTicket probe = probe_before(position_, size);
  FileOpTimer t(*this, Op::read);
  ssize_t n;
  do {
    n = ::read(fd_, buffer, size);
  } while (n < 0 && errno == EINTR);
  if (n < 0) throw call_failed("read", path_, errno, fmt::format(", {} bytes", size));
  t.done_io(static_cast<std::uint64_t>(n), position_, probe);
  position_ += static_cast<std::uint64_t>(n);
  return static_cast<std::size_t>(n);
}

std::uint64_t File::seek(std::int64_t offset, int whence) {
  FileOpTimer t(*this, Op::seek);
  const off_t pos = ::lseek(fd_, static_cast<off_t>(offset), whence);
  if (pos < 0) throw call_failed("lseek", path_, errno, fmt::format(", {}, {}", offset, whence));
  position_ = static_cast<std::uint64_t>(pos);
  t.done(0);
  return static_cast<std::uint64_t>(pos);
}

void File::write_all(const void* buffer, std::size_t size) {
  const auto* in = static_cast<const unsigned char*>(buffer);
  std::size_t done = 0;
  while (done < size) {
    FileOpTimer t(*this, Op::write);
    const ssize_t n = ::write(fd_, in + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw call_failed("write", path_, errno, fmt::format(", {} bytes", size - done));
    }
    if (n == 0) throw call_failed("write", path_, ENOSPC);
    t.done_io(static_cast<std::uint64_t>(n), position_);
    position_ += static_cast<std::uint64_t>(n);
    done += static_cast<std::size_t>(n);
  }
}

void File::clear_direct() {
  FileOpTimer t(*this, Op::fcntl);
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0) throw call_failed("fcntl(F_SETFL)", path_, errno);
  direct_ = false;
  t.done(0);
}

void File::pwrite_all(const void* buffer, std::size_t size, std::uint64_t offset) {
  const auto* in = static_cast<const unsigned char*>(buffer);
  std::size_t done = 0;
  while (done < size) {
    FileOpTimer t(*this, Op::write);
    const ssize_t n = ::pwrite(fd_, in + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw call_failed("pwrite", path_, errno, fmt::format(", {} bytes at {}", size - done, offset + done));
    }
    if (n == 0) throw call_failed("pwrite", path_, ENOSPC);
    t.done_io(static_cast<std::uint64_t>(n), offset + done);
    done += static_cast<std::size_t>(n);
  }
}

void File::fsync() {
  FileOpTimer t(*this, Op::fsync);
  if (::fsync(fd_) != 0) throw call_failed("fsync", path_, errno);
  t.done(0);
}

void File::fdatasync() {
  FileOpTimer t(*this, Op::fsync);
  if (::fdatasync(fd_) != 0) throw call_failed("fdatasync", path_, errno);
  t.done(0);
}

void File::drop_from_cache() {
  const int rc = ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  if (rc != 0) throw call_failed("posix_fadvise(DONTNEED)", path_, rc);
}

void File::truncate(std::uint64_t size) {
  FileOpTimer t(*this, Op::write);
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) throw call_failed("ftruncate", path_, errno);
  t.done(0);
}

bool File::try_lock(bool exclusive) {
  FileOpTimer t(*this, Op::fcntl);
  if (::flock(fd_, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return false;
    if (errno == ENOSYS || errno == ENOTSUP) return true;  // no locks on this file system: as HDF5, go on
    throw call_failed("flock", path_, errno);
  }
  t.done(0);
  return true;
}

void File::unlock() {
  FileOpTimer t(*this, Op::fcntl);
  if (::flock(fd_, LOCK_UN) != 0 && errno != ENOSYS && errno != ENOTSUP) throw call_failed("flock", path_, errno);
  t.done(0);
}

void File::report_transfer(Op op, std::uint64_t bytes, std::uint64_t offset, std::int64_t start_ns,
                           const ProbeTicket& probe) {
  FileOpTimer(*this, op, start_ns, false).done_io(bytes, offset, probe);
}

void File::report_call(Op op, std::int64_t start_ns, std::int64_t ns) {
  IoObserver* obs = thread_observer();
  if (!obs) return;
  OpEvent e;
  e.op = op;
  e.start_ns = start_ns;
  e.ns = ns;
  e.data = data_;
  e.file = hash_;
  e.path = path_;
  obs->on_op(e);
}

ProbeTicket File::probe_before(std::uint64_t offset, std::uint64_t size) {
  if (direct_ || !data_ || !sample_probe(hash_, offset, size)) return {};
  const Residency r = probe_residency(fd_, offset, size);
  return {true, r.resident_pages, r.error};
}

void File::close() {
  if (fd_ < 0) return;
  FileOpTimer t(*this, Op::close);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && errno != EINTR) throw call_failed("close", path_, errno);
  t.done(0);
}

void File::close_quietly() noexcept {
  if (fd_ < 0) return;
  FileOpTimer t(*this, Op::close);
  ::close(fd_);
  fd_ = -1;
  t.done(0);
}

}  // namespace trainio::storage
