#pragma once
// What the storage side saw, where Linux exposes it: bytes this process made the kernel fetch
// from storage (/proc/self/io read_bytes: page-cache misses), and bytes read from the block device
// holding a path (/proc/diskstats, node-wide). Beside the bytes the application read, they tell
// whether an epoch was served by storage or by the page cache.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainio::util {

std::optional<std::uint64_t> process_storage_read_bytes();

// CPU seconds this process has used so far, all threads (getrusage).
struct CpuTimes {
  double user = 0, sys = 0;
};
CpuTimes process_cpu_times();
// CPU nanoseconds the calling thread has used so far (user and system).
std::int64_t thread_cpu_ns();

// CPUs this process may run on (its affinity mask; an MPI launcher may have bound it to fewer
// than the machine has).
int cores_available();
// cores_available() when the process is bound to fewer CPUs than the machine has (a launcher's
// binding), else nothing.
std::optional<int> bound_cores();
// A number that stands for this process's set of CPUs (its affinity mask), the same for equal
// sets; 52 bits, so that it travels exactly as a double. 0 when the set is unknown.
std::uint64_t affinity_key();

// A /proc file of "key : value" lines (cpuinfo, meminfo) as DLIO reads it: lines with exactly one
// ':', key and value stripped; a later key overwrites an earlier one (cpuinfo's last CPU wins).
std::vector<std::pair<std::string, std::string>> proc_key_values(const std::string& path);

// The block device under `path` ("vda", "nvme0n1p2"), empty when there is none (tmpfs, NFS).
std::string block_device_of(const std::string& path);

// Bytes read from `device` since boot (sectors read x 512).
std::optional<std::uint64_t> device_read_bytes(const std::string& device);

}  // namespace trainio::util
