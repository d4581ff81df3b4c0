#pragma once
// How much CPU there was to spare, from /proc: how busy the CPUs this process may run on were
// over a phase, whoever kept them busy, and how long a thread waited for a CPU (the bottleneck
// verdict's evidence).

#include <cstdint>
#include <optional>

namespace trainio::util {

// Since boot, in clock ticks, summed over the CPUs of this process's affinity (/proc/stat's cpuN
// lines): idle (idle + iowait) and total. Every process's work on them counts.
struct HostCpu {
  std::uint64_t idle = 0, total = 0;
};
std::optional<HostCpu> host_cpu();

// The calling thread's id (gettid).
int current_thread_id();
// Nanoseconds thread `tid` of this process has spent runnable but waiting for a CPU
// (/proc/self/task/<tid>/schedstat's run delay); none where the kernel does not keep it.
std::optional<std::int64_t> thread_run_delay_ns(int tid);

}  // namespace trainio::util
