#pragma once
// Reading a workload file from a path the user typed: only a regular file, of bounded size, read
// without waiting (a FIFO or a device never blocks or floods the loader).

#include <cstdint>
#include <optional>
#include <string>

namespace trainio::config {

// Workload files are a few KiB; anything this large is a wrong path, not a workload.
inline constexpr std::uint64_t kMaxWorkloadFileBytes = 1ull << 20;

// The text of the workload file at `path`, or nothing when no file exists there. Anything else
// that is not a readable regular file of at most kMaxWorkloadFileBytes is a usage error naming
// the path and what it is instead.
std::optional<std::string> read_workload_file(const std::string& path);

}  // namespace trainio::config
