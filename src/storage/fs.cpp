#include "storage/fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "storage/atomic_file.hpp"
#include "storage/errno_hint.hpp"
#include "storage/file.hpp"
#include "storage/in_flight.hpp"
#include "storage/io_observer.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace trainio::storage {

namespace {


Error fs_failed(const char* call, const std::string& path, int err) {
  return io_error(fmt::format("{}('{}') failed: {}", call, path, std::strerror(err)), hint_for_errno(call, err, path));
}

// A call on a folder: a metadata call, but no file of the characterization's (not data, no identity).
void observe_folder_op(Op op, std::string_view folder, std::int64_t start_ns) {
  if (IoObserver* obs = thread_observer()) {
    OpEvent e;
    e.op = op;
    e.start_ns = start_ns;
    e.ns = util::now_ns() - start_ns;
    e.data = false;
    e.path = folder;
    obs->on_op(e);
  }
}

}  // namespace

void make_dirs(const std::string& path) {
  if (path.empty() || is_dir(path)) return;
  const std::string parent = util::parent_of(path);
  if (parent != path && parent != "." && parent != "/") make_dirs(parent);
  const auto start = util::now_ns();
  int rc;
  {
    const InFlightCall watched(Op::mkdir, path, start);
    rc = ::mkdir(path.c_str(), 0755);
  }
  if (rc != 0 && errno != EEXIST) throw fs_failed("mkdir", path, errno);
  if (!is_dir(path)) throw fs_failed("mkdir", path, ENOTDIR);
  observe_path_op(Op::mkdir, path, start);
}

void rename_path(const std::string& from, const std::string& to) {
  const auto start = util::now_ns();
  int rc;
  {
    const InFlightCall watched(Op::rename, from, start);
    rc = ::rename(from.c_str(), to.c_str());
  }
  if (rc != 0) throw fs_failed("rename", from + "' -> '" + to, errno);
  observe_path_op(Op::rename, to, start);
}

void sync_folder(const std::string& folder, SyncScope) {
  const auto start = util::now_ns();
  int fd, rc, err;
  {
    const InFlightCall watched(Op::fsync, folder, start);
    fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw fs_failed("open", folder, errno);
    rc = ::fsync(fd);
    err = errno;
  }
  ::close(fd);
  if (rc != 0) throw fs_failed("fsync", folder, err);
  observe_folder_op(Op::fsync, folder, start);
}

void remove_file(const std::string& path) {
  const auto start = util::now_ns();
  int rc;
  {
    const InFlightCall watched(Op::unlink, path, start);
    rc = ::unlink(path.c_str());
  }
  if (rc != 0) {
    if (errno == ENOENT) return;
    throw fs_failed("unlink", path, errno);
  }
  observe_path_op(Op::unlink, path, start);
}

void remove_empty_dir(const std::string& path) {
  const auto start = util::now_ns();
  int rc;
  {
    const InFlightCall watched(Op::unlink, path, start);
    rc = ::rmdir(path.c_str());
  }
  if (rc == 0) observe_path_op(Op::unlink, path, start);
}

std::optional<std::uint64_t> file_size(const std::string& path) {
  const auto start = util::now_ns();
  struct stat st;
  int rc;
  {
    const InFlightCall watched(Op::stat, path, start);
    rc = ::stat(path.c_str(), &st);
  }
  if (rc != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw fs_failed("stat", path, errno);
  }
  observe_path_op(Op::stat, path, start);
  if (!S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<std::uint64_t>(st.st_size);
}

bool is_dir(const std::string& path) {
  struct stat st;
  const InFlightCall watched(Op::stat, path, util::now_ns());
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string resolved_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : resolved.string();
}

std::optional<std::string> irregular_file_kind(const std::string& path) {
  struct stat st;
  int rc;
  {
    const InFlightCall watched(Op::stat, path, util::now_ns());
    rc = ::stat(path.c_str(), &st);
  }
  if (rc != 0) return std::nullopt;
  if (S_ISREG(st.st_mode)) return std::nullopt;
  if (S_ISDIR(st.st_mode)) return "a folder";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a file";
}

void refuse_irregular_file(const std::string& path) {
  if (const auto kind = irregular_file_kind(path))
    throw data_error(fmt::format("'{}' is {}, not a regular file", path, *kind),
                     "put the dataset's file back in its place: 'trainio generate' with the same overrides rewrites "
                     "what is missing or damaged");
}

bool for_each_entry(const std::string& path, const std::function<bool(const std::string& name)>& visit) {
  DIR* opened;
  {
    const InFlightCall watched(Op::open, path, util::now_ns());
    opened = ::opendir(path.c_str());
  }
  const std::unique_ptr<DIR, int (*)(DIR*)> dir(opened, ::closedir);
  if (!dir) {
    if (errno == ENOENT) return true;
    throw fs_failed("opendir", path, errno);
  }
  std::string name;
  while (true) {
    const dirent* entry;
    {
      // Each call watched, not the listing: the visitor may take long over a large folder.
      const InFlightCall watched(Op::read, path, util::now_ns());
      entry = ::readdir(dir.get());
    }
    if (!entry) break;
    name = entry->d_name;
    if (name != "." && name != ".." && !visit(name)) return false;
  }
  return true;
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  for_each_entry(path, [&](const std::string& name) {
    names.push_back(name);
    return true;
  });
  return names;
}

std::optional<std::string> read_small_file(const std::string& path) {
  if (!file_size(path)) return std::nullopt;
  File f = File::open(path);
  std::string content(f.size(), '\0');
  f.pread_exact(content.data(), content.size(), 0);
  f.close();
  return content;
}

namespace {
void write_via_temp(const std::string& path, std::string_view content, bool sync) {
  AtomicFile file(path, sync);
  file.write(content);
  file.commit();
}
}  // namespace

void write_file_atomic(const std::string& path, std::string_view content) { write_via_temp(path, content, true); }
void write_file_replace(const std::string& path, std::string_view content) { write_via_temp(path, content, false); }

std::string temp_path_for(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + name + std::string(kTempSuffix);
}

void remove_temporaries_in(const std::string& folder) {
  std::vector<std::string> stale;
  for_each_entry(folder, [&](const std::string& name) {
    if (name.size() > 1 + kTempSuffix.size() && name.front() == '.' && name.ends_with(kTempSuffix)) stale.push_back(name);
    return true;
  });
  for (const auto& name : stale) remove_file(folder + "/" + name);
}

FsSpace fs_space(const std::string& path) {
  struct statvfs st;
  if (::statvfs(path.c_str(), &st) != 0) throw fs_failed("statvfs", path, errno);
  return {static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_frsize),
          static_cast<std::uint64_t>(st.f_frsize)};
}

}  // namespace trainio::storage
