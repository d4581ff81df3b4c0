#include "engine/node_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "engine/together.hpp"
#include "util/error.hpp"
#include "util/units.hpp"

namespace trainio::engine {

namespace {

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Error shm_error(const std::string& call, const std::string& name, int err, const std::string& purpose,
                std::uint64_t bytes) {
  const bool full = err == ENOSPC || err == ENOMEM || err == EFBIG;
  return (full ? config_error : io_error)(fmt::format("{} of {} for {} ({}): {}", call, name, purpose, util::format_bytes(bytes), std::strerror(err)),
                  full ? "the node's shared memory (/dev/shm) cannot hold it: lower cache.capacity, or enlarge /dev/shm "
                         "(mount -o remount,size=... /dev/shm)"
                       : "check that /dev/shm is a writable tmpfs on every node");
}

}  // namespace

NodeMemory::NodeMemory(const mpi::Comm& comm, std::uint64_t bytes, const std::string& purpose) : size_(bytes) {
  // One name per job and node: rank 0's process id and clock, and the node's number.
  const std::string token = comm.broadcast(
      fmt::format("{}-{}", ::getpid(), std::chrono::steady_clock::now().time_since_epoch().count()));
  const std::string name = fmt::format("/trainio-{}-{}", token, comm.host_index());
  const bool first = comm.node_rank() == 0;
  auto map = [&](int flags) {
    const Descriptor fd(::shm_open(name.c_str(), flags, 0600));
    if (fd.get() < 0) throw shm_error("shm_open", name, errno, purpose, bytes);
    if (first) {
      const int rc = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes));
      if (rc != 0) {
        ::shm_unlink(name.c_str());
        throw shm_error("posix_fallocate", name, rc, purpose, bytes);
      }
    }
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (p == MAP_FAILED) {
      if (first) ::shm_unlink(name.c_str());
      throw shm_error("mmap", name, errno, purpose, bytes);
    }
    data_ = p;
  };
  together(comm, [&] {
    if (first) map(O_RDWR | O_CREAT | O_EXCL);
  });
  try {
    together(comm, [&] {
      if (!first) map(O_RDWR);
    });
  } catch (...) {
    if (first) ::shm_unlink(name.c_str());
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = nullptr;
    throw;
  }
  if (first) ::shm_unlink(name.c_str());
}

NodeMemory::~NodeMemory() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace trainio::engine
