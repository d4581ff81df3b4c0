#pragma once
// The CPU time of the CPUs this process may run on, from /proc/stat: how busy they were over a
// phase, whoever kept them busy (the bottleneck verdict's "no core to spare").

#include <cstdint>
#include <optional>

namespace trainio::util {

// Since boot, in clock ticks, summed over the CPUs of this process's affinity (/proc/stat's cpuN
// lines): idle (idle + iowait) and total. Every process's work on them counts.
struct HostCpu {
  std::uint64_t idle = 0, total = 0;
};
std::optional<HostCpu> host_cpu();

}  // namespace trainio::util
