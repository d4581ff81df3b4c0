#include "storage/errno_hint.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>


namespace trainio::storage {

namespace {

struct NamedFolder {
  std::string folder, name;
  bool dataset = false;
  std::filesystem::path absolute;  // the folder, absolute and normalised
};

std::mutex names_mutex;
std::vector<NamedFolder> names;
// The working directory when the first folder was named (trainio never changes it). A hint is
// made without system calls: libhdf5's probe of a missing file builds one, and the calls it makes
// must be libhdf5's own, which the HDF5 write template replays (format/hdf5/hdf5_write_template.hpp).
std::filesystem::path working_dir;

std::filesystem::path absolute_of(const std::string& p) {
  const std::filesystem::path n = (working_dir / p).lexically_normal();  // an absolute p stays itself
  return n.has_filename() ? n : n.parent_path();  // "a/b/" names the folder "a/b"
}

// The named folder that holds `path` most closely (the deepest), if any.
const NamedFolder* folder_of(const std::string& path) {
  const NamedFolder* best = nullptr;
  if (path.empty()) return best;
  const std::filesystem::path p = absolute_of(path);
  for (const auto& n : names) {
    const auto rel = p.lexically_relative(n.absolute);
    const bool within = !rel.empty() && *rel.begin() != "..";
    if (within && (!best || n.folder.size() > best->folder.size())) best = &n;
  }
  return best;
}

}  // namespace

void name_folder(const std::string& folder, const std::string& name, bool dataset) {
  const std::lock_guard lock(names_mutex);
  if (working_dir.empty()) working_dir = std::filesystem::current_path();
  names.push_back({folder, name, dataset, absolute_of(folder)});
}

void forget_folder_names() {
  const std::lock_guard lock(names_mutex);
  names.clear();
}

std::string hint_for_errno(const char* call, int err, const std::string& path) {
  const std::lock_guard lock(names_mutex);
  const NamedFolder* named = folder_of(path);
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      if (named)
        return fmt::format("the file system holding {} is full: free space there, or point it elsewhere", named->name);
      return "the file system is full: free space or point the data/checkpoint folder elsewhere";
    case EACCES:
    case EPERM:
    case EROFS:
      return "check the permissions of the folder, or choose one you can write to";
    case ENOENT:
      if (named && !named->dataset)
        return fmt::format("check the path: a folder in it is missing ({} is '{}')", named->name, named->folder);
      return "check the path; generate the dataset first with 'trainio generate' if it is missing";
    case ENOTDIR:
    case EEXIST:
      return "a file stands where a folder is expected: remove it or choose another path";
    case EISDIR:
      return "a folder stands where a file is expected: remove it (or regenerate the dataset) or choose another path";
    case ELOOP:
      return "a symbolic link in the path points back at itself (a loop): remove or fix the link";
    case ENAMETOOLONG:
      return "a name in the path is longer than the file system allows (usually 255 bytes per name, 4096 in all): "
             "use shorter folder names or file_prefix";
    case EINVAL:
      if (std::strcmp(call, "open") == 0) return "the file system may not support the requested mode (e.g. O_DIRECT)";
      return "check the path and the file system it is on";
    case EIO:
      return "the storage reported an I/O error: check the device or mount (dmesg) and try again";
    default:
      return "check the path, its permissions and the file system it is on";
  }
}

}  // namespace trainio::storage
