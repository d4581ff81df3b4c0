#include "util/proc_stats.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <ctime>
#include <fstream>
#include <sstream>
#include <string_view>

#include "util/fnv.hpp"
#include "util/host_info.hpp"
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

CpuTimes process_cpu_times() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return {seconds(u.ru_utime), seconds(u.ru_stime)};
}

std::int64_t thread_cpu_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::optional<int> bound_cores() {
  const int mine = cores_available();
  if (mine > 0 && mine < host_info().cpu_count) return mine;
  return std::nullopt;
}

namespace {
// The CPUs this process may run on; none when the kernel does not say.
std::optional<cpu_set_t> affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return std::nullopt;
  return set;
}
}  // namespace

std::uint64_t affinity_key() {
  const std::optional<cpu_set_t> set = affinity();
  if (!set) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(&*set), sizeof *set);
  return fnv1a(kFnvOffset, bytes) & ((1ULL << 52) - 1);
}

int cores_available() {
  const std::optional<cpu_set_t> set = affinity();
  return set ? CPU_COUNT(&*set) : 0;
}

std::vector<std::pair<std::string, std::string>> proc_key_values(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream in(path);
  auto strip = [](std::string s) {
    const auto a = s.find_first_not_of(" \t");
    const auto b = s.find_last_not_of(" \t");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || line.find(':', colon + 1) != std::string::npos) continue;
    const std::string key = strip(line.substr(0, colon));
    if (key.empty() || key == "processor") continue;
    const std::string value = strip(line.substr(colon + 1));
    bool found = false;
    for (auto& [k, v] : out)
      if (k == key) {
        v = value;
        found = true;
      }
    if (!found) out.emplace_back(key, value);
  }
  return out;
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
