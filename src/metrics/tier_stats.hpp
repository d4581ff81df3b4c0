#pragma once
// What a cache tier did in a phase (docs/caching.md): samples and bytes served from it (hits) and
// past it (misses), files copied in (fills) and let go (evictions), bytes moved on each side, what
// the backing storage's reads hit in the page cache, and how far a cache-aware order moved from
// the uniform shuffle. Per thread, merged over threads and summed over ranks.

#include <array>
#include <cstdint>

#include "metrics/page_cache.hpp"

namespace trainio::metrics {

struct TierStats {
  std::uint64_t hit_samples = 0, miss_samples = 0;
  std::uint64_t hit_bytes = 0, miss_bytes = 0;  // sample bytes delivered from the tier, and past it
  std::uint64_t fills = 0;                      // files copied into the tier
  std::uint64_t fill_ns = 0;                    // time spent copying them (all threads)
  std::uint64_t evictions = 0;
  std::uint64_t busy = 0;          // misses read past the tier while another reader filled the file
  std::uint64_t not_admitted = 0;  // misses the policy kept out (a full static tier, a file larger than it)
  std::uint64_t backing_read_bytes = 0;  // read from the dataset's storage: fills, and misses not filled
  std::uint64_t tier_read_bytes = 0;     // read from the tier: its local copies, or copied out of its memory
  std::uint64_t tier_write_bytes = 0;    // written into the tier by fills
  // Cache-aware order: sample pairs whose order differs from the uniform shuffle, all pairs of the
  // rank's epoch, and samples not at their place in it.
  std::uint64_t order_inversions = 0, order_pairs = 0, order_moved = 0, ordered_samples = 0;
  PageCacheStats backing_cache;  // what the backing reads hit
  PageCacheStats tier_cache;     // what the reads of the local tier's copies hit

  static constexpr std::size_t kCounters = 16;
  std::array<std::uint64_t*, kCounters> counters() {
    return {&hit_samples, &miss_samples, &hit_bytes, &miss_bytes, &fills, &fill_ns, &evictions, &busy, &not_admitted,
            &backing_read_bytes, &tier_read_bytes, &tier_write_bytes, &order_inversions, &order_pairs, &order_moved,
            &ordered_samples};
  }
  void merge(const TierStats& o) {
    auto mine = counters();
    auto theirs = const_cast<TierStats&>(o).counters();
    for (std::size_t i = 0; i < kCounters; ++i) *mine[i] += *theirs[i];
    backing_cache.merge(o.backing_cache);
    tier_cache.merge(o.tier_cache);
  }
};

}  // namespace trainio::metrics
