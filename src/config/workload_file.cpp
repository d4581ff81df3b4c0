#include "config/workload_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.hpp"

namespace trainio::config {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

Error cannot_read(const std::string& path, int err) {
  return usage_error(fmt::format("cannot read workload file '{}': {}", path, std::strerror(err)),
                     "give a readable YAML file, or a shipped workload name ('trainio workloads' lists them)");
}

void require_regular(const std::string& path, const struct stat& st) {
  if (S_ISREG(st.st_mode)) return;
  if (S_ISDIR(st.st_mode))
    throw usage_error(fmt::format("workload '{}' is a directory", path),
                      fmt::format("give the YAML file inside it, e.g. '{}/workload.yaml', or a shipped workload name",
                                  path));
  throw usage_error(fmt::format("workload '{}' is not a regular file ({})", path, kind_of(st.st_mode)),
                    "give a YAML file, or a shipped workload name ('trainio workloads' lists them)");
}

void require_small(const std::string& path, std::uint64_t bytes) {
  if (bytes <= kMaxWorkloadFileBytes) return;
  throw usage_error(fmt::format("workload file '{}' has {} bytes; a workload file is at most {} MiB", path, bytes,
                                kMaxWorkloadFileBytes >> 20),
                    "check the path: this is not a workload file");
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() { ::close(fd_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::optional<std::string> read_workload_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw cannot_read(path, errno);
  }
  require_regular(path, st);
  // O_NONBLOCK: if the path was swapped for a FIFO since the stat, open must not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw cannot_read(path, errno);
  Descriptor file(fd);
  if (::fstat(file.get(), &st) != 0) throw cannot_read(path, errno);
  require_regular(path, st);
  require_small(path, static_cast<std::uint64_t>(st.st_size));

  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t have = 0;
  while (have < text.size()) {
    const ssize_t n = ::read(file.get(), text.data() + have, text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw cannot_read(path, errno);
    if (n == 0) break;  // shrank while we read: take what is there
    have += static_cast<std::size_t>(n);
  }
  text.resize(have);
  return text;
}

}  // namespace trainio::config
