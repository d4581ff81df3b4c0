#include "storage/file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "storage/io_observer.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace trainio::storage {

namespace {

// Times one storage call and reports it to the thread's observer.
class OpTimer {
 public:
  explicit OpTimer(Op op) : op_(op), start_(util::now_ns()) {}
  void done(std::uint64_t bytes) const {
    if (IoObserver* obs = thread_observer()) obs->on_op(op_, bytes, util::now_ns() - start_);
  }

 private:
  Op op_;
  std::int64_t start_;
};

Error call_failed(const char* call, const std::string& path, int err, const std::string& detail = {}) {
  std::string msg = fmt::format("{}('{}'{}) failed: {}", call, path, detail, std::strerror(err));
  std::string hint;
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      hint = "the file system is full: free space or point the data/checkpoint folder elsewhere";
      break;
    case EACCES:
    case EPERM:
    case EROFS:
      hint = "check the permissions of the folder, or choose one you can write to";
      break;
    case ENOENT:
      hint = "check the path; generate the dataset first with 'trainio generate' if it is missing";
      break;
    case EINVAL:
      if (std::strcmp(call, "open") != 0) break;
      hint = "the file system may not support the requested mode (e.g. O_DIRECT)";
      break;
    default:
      break;
  }
  return Error(ErrorKind::io, std::move(msg), std::move(hint));
}

int open_flags(const OpenOptions& o) {
  int flags = o.close_on_exec ? O_CLOEXEC : 0;
  switch (o.access) {
    case Access::read: flags |= O_RDONLY; break;
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
  OpTimer t(Op::open);
  const int fd = ::open(path.c_str(), open_flags(options), 0644);
  if (fd < 0) throw call_failed("open", path, errno);
  t.done(0);
  return File(fd, path);
}

File::~File() { close_quietly(); }

File::File(File&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    close_quietly();
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

File::Stat File::stat() {
  OpTimer t(Op::stat);
  struct stat st;
  if (::fstat(fd_, &st) != 0) throw call_failed("fstat", path_, errno);
  t.done(0);
  return {static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_blksize),
          static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

bool File::is_terminal() {
  OpTimer t(Op::ioctl);
  termios tio;
  const bool tty = ::ioctl(fd_, TCGETS, &tio) == 0;
  t.done(0);
  return tty;
}

File File::duplicate() {
  OpTimer t(Op::fcntl);
  const int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) throw call_failed("fcntl(F_DUPFD_CLOEXEC)", path_, errno);
  t.done(0);
  return File(fd, path_);
}

File File::duplicate_for_stdio() {
  File copy = duplicate();
  OpTimer t(Op::fcntl);
  if (::fcntl(copy.fd_, F_GETFL) < 0) throw call_failed("fcntl(F_GETFL)", path_, errno);
  t.done(0);
  return copy;
}

std::size_t File::pread_some(void* buffer, std::size_t size, std::uint64_t offset) {
  OpTimer t(Op::read);
  ssize_t n;
  do {
    n = ::pread(fd_, buffer, size, static_cast<off_t>(offset));
  } while (n < 0 && errno == EINTR);
  if (n < 0) throw call_failed("pread", path_, errno, fmt::format(", {} bytes at {}", size, offset));
  t.done(static_cast<std::uint64_t>(n));
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
  OpTimer t(Op::read);
  ssize_t n;
  do {
    n = ::read(fd_, buffer, size);
  } while (n < 0 && errno == EINTR);
  if (n < 0) throw call_failed("read", path_, errno, fmt::format(", {} bytes", size));
  t.done(static_cast<std::uint64_t>(n));
  return static_cast<std::size_t>(n);
}

std::uint64_t File::seek(std::int64_t offset, int whence) {
  OpTimer t(Op::seek);
  const off_t pos = ::lseek(fd_, static_cast<off_t>(offset), whence);
  if (pos < 0) throw call_failed("lseek", path_, errno, fmt::format(", {}, {}", offset, whence));
  t.done(0);
  return static_cast<std::uint64_t>(pos);
}

void File::write_all(const void* buffer, std::size_t size) {
  const auto* in = static_cast<const unsigned char*>(buffer);
  std::size_t done = 0;
  while (done < size) {
    OpTimer t(Op::write);
    const ssize_t n = ::write(fd_, in + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw call_failed("write", path_, errno, fmt::format(", {} bytes", size - done));
    }
    if (n == 0) throw call_failed("write", path_, ENOSPC);
    t.done(static_cast<std::uint64_t>(n));
    done += static_cast<std::size_t>(n);
  }
}

void File::clear_direct() {
  OpTimer t(Op::fcntl);
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0) throw call_failed("fcntl(F_SETFL)", path_, errno);
  t.done(0);
}

void File::pwrite_all(const void* buffer, std::size_t size, std::uint64_t offset) {
  const auto* in = static_cast<const unsigned char*>(buffer);
  std::size_t done = 0;
  while (done < size) {
    OpTimer t(Op::write);
    const ssize_t n = ::pwrite(fd_, in + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw call_failed("pwrite", path_, errno, fmt::format(", {} bytes at {}", size - done, offset + done));
    }
    if (n == 0) throw call_failed("pwrite", path_, ENOSPC);
    t.done(static_cast<std::uint64_t>(n));
    done += static_cast<std::size_t>(n);
  }
}

void File::fsync() {
  OpTimer t(Op::fsync);
  if (::fsync(fd_) != 0) throw call_failed("fsync", path_, errno);
  t.done(0);
}

void File::fdatasync() {
  OpTimer t(Op::fsync);
  if (::fdatasync(fd_) != 0) throw call_failed("fdatasync", path_, errno);
  t.done(0);
}

void File::drop_from_cache() {
  const int rc = ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  if (rc != 0) throw call_failed("posix_fadvise(DONTNEED)", path_, rc);
}

void File::truncate(std::uint64_t size) {
  OpTimer t(Op::write);
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) throw call_failed("ftruncate", path_, errno);
  t.done(0);
}

bool File::try_lock(bool exclusive) {
  OpTimer t(Op::fcntl);
  if (::flock(fd_, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return false;
    if (errno == ENOSYS || errno == ENOTSUP) return true;  // no locks on this file system: as HDF5, go on
    throw call_failed("flock", path_, errno);
  }
  t.done(0);
  return true;
}

void File::unlock() {
  OpTimer t(Op::fcntl);
  if (::flock(fd_, LOCK_UN) != 0 && errno != ENOSYS && errno != ENOTSUP) throw call_failed("flock", path_, errno);
  t.done(0);
}

void File::close() {
  if (fd_ < 0) return;
  OpTimer t(Op::close);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && errno != EINTR) throw call_failed("close", path_, errno);
  t.done(0);
}

void File::close_quietly() noexcept {
  if (fd_ < 0) return;
  OpTimer t(Op::close);
  ::close(fd_);
  fd_ = -1;
  t.done(0);
}

}  // namespace trainio::storage
