#include "util/host_info.hpp"

#include <limits.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/error.hpp"
#include "util/paths.hpp"

namespace trainio::util {

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0)
    throw internal_error(std::string("gethostname failed: ") + std::strerror(errno));
  return name;
}

HostInfo host_info() {
  HostInfo h;
  h.hostname = hostname();
  utsname u{};
  if (uname(&u) == 0) {
    h.kernel = std::string(u.sysname) + " " + u.release;
    h.machine = u.machine;
  }
  h.cpu_count = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  h.memory_bytes = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) h.cpu_model = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  return h;
}

std::string filesystem_type(const std::string& path) {
  char resolved[PATH_MAX];
  std::string target = path.empty() ? "." : path;
  // The folder may not exist yet: climb to the nearest existing parent.
  while (realpath(target.c_str(), resolved) == nullptr) {
    const std::string parent = parent_of(target);
    if (parent == target) return "unknown";
    target = parent;
  }
  const std::string real = resolved;
  std::ifstream mounts("/proc/self/mountinfo");
  std::string best_mount, best_type = "unknown";
  for (std::string line; std::getline(mounts, line);) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    std::istringstream in(line);
    std::string id, parent, dev, root, mountpoint;
    in >> id >> parent >> dev >> root >> mountpoint;
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype;
    tail >> fstype;
    const bool covers = real == mountpoint || mountpoint == "/" ||
                        (real.rfind(mountpoint, 0) == 0 && real.size() > mountpoint.size() && real[mountpoint.size()] == '/');
    if (covers && mountpoint.size() >= best_mount.size()) {
      best_mount = mountpoint;
      best_type = fstype;
    }
  }
  return best_type;
}

}  // namespace trainio::util
