#include "engine/cache/node_memory.hpp"

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
  // One name per job and node: rank 0's process id and clock, and the node's number. The name
  // exists only until every rank of the node has opened it; the pages are allocated after that,
  // so a run killed while a large tier is being allocated leaves nothing in /dev/shm.
  const std::string token = comm.broadcast(
      fmt::format("{}-{}", ::getpid(), std::chrono::steady_clock::now().time_since_epoch().count()));
  const std::string name = fmt::format("/trainio-{}-{}", token, comm.host_index());
  const bool first = comm.node_rank() == 0;
  int fd = -1;
  auto open = [&](int flags) {
    fd = ::shm_open(name.c_str(), flags, 0600);
    if (fd < 0) throw shm_error("shm_open", name, errno, purpose, bytes);
  };
  try {
    together(comm, [&] {
      if (first) open(O_RDWR | O_CREAT | O_EXCL);
    });
    try {
      together(comm, [&] {
        if (!first) open(O_RDWR);
      });
    } catch (...) {
      if (first) ::shm_unlink(name.c_str());
      throw;
    }
    together(comm, [&] {
      if (!first) return;
      ::shm_unlink(name.c_str());
      if (const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); rc != 0)
        throw shm_error("posix_fallocate", name, rc, purpose, bytes);
    });
    together(comm, [&] {
      void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) throw shm_error("mmap", name, errno, purpose, bytes);
      data_ = p;
    });
  } catch (...) {
    if (fd >= 0) ::close(fd);
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = nullptr;
    throw;
  }
  ::close(fd);
}

NodeMemory::~NodeMemory() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace trainio::engine
