#include "storage/errno_hint.hpp"

#include <cerrno>
#include <cstring>

namespace trainio::storage {

std::string hint_for_errno(const char* call, int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return "the file system is full: free space or point the data/checkpoint folder elsewhere";
    case EACCES:
    case EPERM:
    case EROFS:
      return "check the permissions of the folder, or choose one you can write to";
    case ENOENT:
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
