#include "engine/cache_control.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/together.hpp"
#include "format/format.hpp"
#include "storage/file.hpp"
#include "util/error.hpp"

namespace trainio::engine {

namespace {

void drop_file(const std::string& path) {
  storage::File f = storage::File::open(path);
  try {
    f.fdatasync();
  } catch (const Error&) {
    // Read-only or special file systems may refuse: the advice below still applies to clean pages.
  }
  f.drop_from_cache();
  f.close();
}

// The errno of writing "3" to /proc/sys/vm/drop_caches, or 0: each call checked where it fails.
int write_drop_caches() {
  const int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int error = 0;
  if (const ssize_t n = ::write(fd, "3\n", 2); n != 2) error = n < 0 ? errno : EIO;
  if (::close(fd) != 0 && error == 0) error = errno;
  return error;
}

void drop_caches() {
  ::sync();
  if (const int error = write_drop_caches(); error != 0)
    throw usage_error(fmt::format("reader.evict=drop_caches cannot write /proc/sys/vm/drop_caches: {}", std::strerror(error)),
                      "run as root (machine-wide), or use reader.evict=fadvise (per file, no privilege needed)");
}

}  // namespace

void evict_dataset(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm, plan::Split split) {
  if (w.reader.evict == config::Evict::none || w.dataset.format == config::Format::synthetic) return;
  together(comm, [&] {
    if (w.reader.evict == config::Evict::drop_caches) {
      if (comm.node_rank() == 0) drop_caches();
      return;
    }
    const auto writer = format::make_writer(w);  // knows the companion files (indexes)
    const auto share = static_cast<std::uint64_t>(comm.node_size());
    for (std::uint64_t k = static_cast<std::uint64_t>(comm.node_rank()); k < layout.num_files(split); k += share) {
      const plan::DataFile file = layout.file(split, k);
      drop_file(file.path);
      for (const auto& companion : writer->companions(file)) drop_file(companion);
    }
  });
}

void evict_files(const std::vector<std::string>& paths, config::Evict how, const mpi::Comm& comm) {
  if (how == config::Evict::none) return;
  together(comm, [&] {
    if (how == config::Evict::drop_caches) {
      if (comm.node_rank() == 0) drop_caches();
      return;
    }
    for (const auto& path : paths) drop_file(path);
  });
}

}  // namespace trainio::engine
