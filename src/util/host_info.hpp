#pragma once
// Facts about this machine for result context.

#include <cstdint>
#include <string>

namespace trainio::util {

struct HostInfo {
  std::string hostname;
  std::string kernel;     // uname -sr
  std::string machine;    // uname -m: x86_64, aarch64
  std::string cpu_model;  // /proc/cpuinfo "model name"
  int cpu_count = 0;      // online CPUs
  std::uint64_t memory_bytes = 0;
};

HostInfo host_info();
// gethostname(); throws an internal error when it fails.
std::string hostname();

// File-system type of the mount holding `path` ("ext4", "tmpfs", "fuse.glusterfs", "lustre"),
// from /proc/self/mountinfo; "unknown" when it cannot be told.
std::string filesystem_type(const std::string& path);

}  // namespace trainio::util
