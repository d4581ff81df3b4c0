#pragma once
// Darshan's POSIX characterization of a set of storage calls, for one class of files (data, or
// the others: indexes, markers): counts and bytes, the access-size histogram in Darshan's
// buckets, sequential and consecutive accesses, metadata time against data time, distinct
// files (estimated, with no limit on their number) and the most common access sizes.

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "storage/io_observer.hpp"
#include "util/distinct_count.hpp"

namespace trainio::metrics {

// Darshan's buckets of bytes moved per call, upper bounds inclusive: <=100, <=1K, <=10K, <=100K,
// <=1M, <=4M, <=10M, <=100M, <=1G, more.
inline constexpr int kSizeBuckets = 10;
int size_bucket(std::uint64_t bytes);
const char* size_bucket_name(int bucket);  // "0_100", "100_1K", ..., "1G_PLUS"

struct AccessProfile {
  std::uint64_t reads = 0, writes = 0, bytes_read = 0, bytes_written = 0;
  std::array<std::uint64_t, kSizeBuckets> read_sizes{}, write_sizes{};
  std::uint64_t sequential_reads = 0, consecutive_reads = 0, sequential_writes = 0, consecutive_writes = 0;
  std::uint64_t metadata_ops = 0;
  std::uint64_t metadata_ns = 0, data_ns = 0;
  util::DistinctCount files;
  // Most common access sizes (reads and writes): up to kCommonSlots sizes are counted exactly;
  // calls of further sizes are only counted in `other_sizes`.
  static constexpr std::size_t kCommonSlots = 32;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> common;  // size, calls
  std::uint64_t other_sizes = 0;

  void add(const storage::OpEvent& e);
  void merge(const AccessProfile& o);
  // Counts `calls` accesses of `size` bytes among the common sizes (or other_sizes when full).
  void count_size(std::uint64_t size, std::uint64_t calls);
  // The `n` most frequent access sizes, most frequent first.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> top_sizes(std::size_t n) const;
};

}  // namespace trainio::metrics
