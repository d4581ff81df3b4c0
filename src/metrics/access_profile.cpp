#include "metrics/access_profile.hpp"

#include <algorithm>

namespace trainio::metrics {

int size_bucket(std::uint64_t bytes) {
  static constexpr std::uint64_t kUpper[kSizeBuckets - 1] = {100,        1024,          10240,     102400,
                                                             1048576,    4194304,       10485760,  104857600,
                                                             1073741824};
  for (int i = 0; i < kSizeBuckets - 1; ++i)
    if (bytes <= kUpper[i]) return i;
  return kSizeBuckets - 1;
}

const char* size_bucket_name(int bucket) {
  static constexpr const char* kNames[kSizeBuckets] = {"0_100",    "100_1K",   "1K_10K",    "10K_100K", "100K_1M",
                                                       "1M_4M",    "4M_10M",   "10M_100M",  "100M_1G",  "1G_PLUS"};
  return kNames[bucket];
}

void AccessProfile::count_size(std::uint64_t size, std::uint64_t calls) {
  for (auto& [s, n] : common)
    if (s == size) {
      n += calls;
      return;
    }
  if (common.size() == kCommonSlots) {
    other_sizes += calls;
    return;
  }
  if (common.empty()) common.reserve(kCommonSlots);  // once: a new size never allocates on the read path
  common.emplace_back(size, calls);
}

void AccessProfile::add(const storage::OpEvent& e) {
  if (e.file) files.add(e.file * 0x9e3779b97f4a7c15ULL);
  if (!storage::moves_data(e.op)) {
    ++metadata_ops;
    metadata_ns += static_cast<std::uint64_t>(e.ns > 0 ? e.ns : 0);
    return;
  }
  data_ns += static_cast<std::uint64_t>(e.ns > 0 ? e.ns : 0);
  const int bucket = size_bucket(e.bytes);
  if (e.op == storage::Op::write) {
    ++writes;
    bytes_written += e.bytes;
    ++write_sizes[bucket];
    sequential_writes += e.sequential;
    consecutive_writes += e.consecutive;
  } else {
    ++reads;
    bytes_read += e.bytes;
    ++read_sizes[bucket];
    sequential_reads += e.sequential;
    consecutive_reads += e.consecutive;
  }
  count_size(e.bytes, 1);
}

void AccessProfile::merge(const AccessProfile& o) {
  reads += o.reads;
  writes += o.writes;
  bytes_read += o.bytes_read;
  bytes_written += o.bytes_written;
  for (int i = 0; i < kSizeBuckets; ++i) {
    read_sizes[i] += o.read_sizes[i];
    write_sizes[i] += o.write_sizes[i];
  }
  sequential_reads += o.sequential_reads;
  consecutive_reads += o.consecutive_reads;
  sequential_writes += o.sequential_writes;
  consecutive_writes += o.consecutive_writes;
  metadata_ops += o.metadata_ops;
  metadata_ns += o.metadata_ns;
  data_ns += o.data_ns;
  files.merge(o.files);
  for (const auto& [size, calls] : o.common) count_size(size, calls);
  other_sizes += o.other_sizes;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> AccessProfile::top_sizes(std::size_t n) const {
  auto sorted = common;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (sorted.size() > n) sorted.resize(n);
  return sorted;
}

}  // namespace trainio::metrics
