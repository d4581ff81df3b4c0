#include "util/proc_stats.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>
#include <sstream>

#include "util/paths.hpp"

namespace trainio::util {

std::optional<std::uint64_t> process_storage_read_bytes() {
  std::ifstream in("/proc/self/io");
  for (std::string key; in >> key;) {
    std::uint64_t value = 0;
    in >> value;
    if (key == "read_bytes:") return value;
  }
  return std::nullopt;
}

std::string block_device_of(const std::string& path) {
  std::string target = path.empty() ? "." : path;
  struct stat st;
  while (::stat(target.c_str(), &st) != 0) {
    const std::string parent = parent_of(target);
    if (parent == target) return {};
    target = parent;
  }
  if (major(st.st_dev) == 0) return {};  // anonymous devices: tmpfs, NFS, FUSE
  std::ifstream uevent("/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)) +
                       "/uevent");
  for (std::string line; std::getline(uevent, line);)
    if (line.rfind("DEVNAME=", 0) == 0) return line.substr(8);
  return {};
}

std::optional<std::uint64_t> device_read_bytes(const std::string& device) {
  if (device.empty()) return std::nullopt;
  std::ifstream in("/proc/diskstats");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string major, minor, name;
    std::uint64_t reads = 0, merged = 0, sectors = 0;
    f >> major >> minor >> name >> reads >> merged >> sectors;
    if (name == device) return sectors * 512;
  }
  return std::nullopt;
}

}  // namespace trainio::util
