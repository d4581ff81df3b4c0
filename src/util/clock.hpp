#pragma once
// Time as trainio measures it: a monotonic clock for intervals, wall time for result stamps.

#include <cstdint>
#include <optional>
#include <string>

namespace trainio::util {

// Monotonic nanoseconds (CLOCK_MONOTONIC); only differences are meaningful.
std::int64_t now_ns();

inline double ns_to_s(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

// Sleeps until the monotonic time `deadline_ns`; emulated compute uses absolute deadlines so
// that wake-up latency does not accumulate across steps.
void sleep_until_ns(std::int64_t deadline_ns);

// Wall-clock time as ISO 8601 with microseconds, local time, as DLIO stamps its results:
// "2026-11-21T10:15:03.123456". It is the monotonic clock mapped to the wall clock by one offset
// taken when the process first asks, so that two such times differ by the monotonic span between
// them (the run's records give both).
std::string wall_time_iso();
// The same for a moment of the monotonic clock (now_ns()).
std::string wall_time_iso_of(std::int64_t mono_ns);
// A moment of the monotonic clock as wall-clock microseconds since the epoch (the same mapping),
// and such a time as ISO 8601: for comparing moments of several ranks, on several hosts.
std::int64_t wall_us_of(std::int64_t mono_ns);
std::string wall_time_iso_of_us(std::int64_t wall_us);
// Seconds from one wall time as wall_time_iso() writes it to another; 0 when either is unreadable.
double seconds_between(const std::string& start, const std::string& end);

// When this process started, on the monotonic clock: the kernel's start time of the process
// (/proc/self/stat, in clock ticks since boot: 10 ms on most kernels) moved onto CLOCK_MONOTONIC
// by the current distance between the boot-time and monotonic clocks. nullopt where /proc cannot
// say. Times from it count what a job pays before trainio's first line runs (loading, MPI_Init).
std::optional<std::int64_t> process_start_ns();

// Compact wall time for folder names: "20261121-101503".
std::string wall_time_compact();

}  // namespace trainio::util
