#pragma once
// MLPerf Storage's rules that trainio checks: which shipped workloads are MLPerf's, how large a
// training dataset must be, and which keys a CLOSED or OPEN submission may change.

#include <cstdint>
#include <optional>
#include <string>

#include "config/workload.hpp"

namespace trainio::mlperf {

enum class Kind { training, checkpointing };

struct Benchmark {
  const char* workload;     // shipped workload name
  Kind kind;
  std::int64_t closed_ranks;  // checkpointing: the process count CLOSED asks for (0: any)
};

// The MLPerf Storage benchmark a shipped workload name is, or nullptr for any other workload.
const Benchmark* find_benchmark(const std::string& workload);

// The dataset MLPerf asks for: at least 500 steps per epoch on every accelerator, and at least 5
// times the clients' memory.
struct DatasetSize {
  std::uint64_t samples_for_steps = 0;   // 500 x batch x accelerators
  std::uint64_t samples_for_memory = 0;  // 5 x hosts x memory / record length, rounded up
  std::uint64_t samples = 0;             // the larger of the two
  std::uint64_t files = 0;               // samples / samples per file, rounded up
  std::uint64_t subfolders = 0;          // 0, or enough to keep each folder at 10,000 files or fewer
  double bytes = 0;                      // files x samples per file x record length
  double record_bytes = 0;
};
inline constexpr std::uint64_t kStepsPerEpoch = 500;
inline constexpr std::uint64_t kMemoryMultiple = 5;
inline constexpr std::uint64_t kFilesPerFolder = 10000;

DatasetSize required_dataset(const config::Workload& w, std::uint64_t accelerators, std::uint64_t hosts,
                             std::uint64_t host_memory_bytes);

// The dataset the workload as configured holds falls short of `need`: a one-line warning naming
// both sizes and the override that fixes it; nullopt when it is large enough.
std::optional<std::string> dataset_shortfall(const config::Workload& w, const DatasetSize& need,
                                             std::uint64_t accelerators, std::uint64_t hosts,
                                             std::uint64_t host_memory_bytes);

// The override that sets the dataset to `need`, as trainio's "section.key=value" words.
std::string override_line(const DatasetSize& need);

// Which division lets a submitter change `key` (a resolved config path such as
// "reader.read_threads"): "closed" (both divisions), "open" (OPEN only), "seed" (the benchmark's
// own per-run seed: both) or "" (neither).
std::string division_of_key(const std::string& key);

}  // namespace trainio::mlperf
