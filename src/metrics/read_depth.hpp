#pragma once
// Reads of data files by the depth they started at (how many this process had in flight, itself
// included): calls and their total time per depth band. Whether latency rises with depth tells a
// saturated storage (it does) from too little concurrency (it stays flat): the bottleneck
// verdict's evidence (docs/metrics.md).

#include <array>
#include <cstdint>

namespace trainio::metrics {

struct ReadDepth {
  // Bands: depth 1, 2, 3-4, 5-8, 9-16, 17 and more.
  static constexpr std::size_t kBands = 6;
  static constexpr std::array<std::uint32_t, kBands> kLowest = {1, 2, 3, 5, 9, 17};
  std::array<std::uint64_t, kBands> calls{}, ns{};

  static std::size_t band_of(std::uint32_t depth) {
    std::size_t b = 0;
    while (b + 1 < kBands && depth >= kLowest[b + 1]) ++b;
    return b;
  }
  void add(std::uint32_t depth, std::uint64_t call_ns) {
    if (depth == 0) return;
    const std::size_t b = band_of(depth);
    ++calls[b];
    ns[b] += call_ns;
  }
  void merge(const ReadDepth& o) {
    for (std::size_t b = 0; b < kBands; ++b) {
      calls[b] += o.calls[b];
      ns[b] += o.ns[b];
    }
  }
  std::uint64_t total_calls() const {
    std::uint64_t n = 0;
    for (auto c : calls) n += c;
    return n;
  }
};

}  // namespace trainio::metrics
