#pragma once
// A rank's sample order in an epoch with sample_shuffle: cache_aware, after DeepIO's
// opportunistic ordering: the plan's uniform shuffle, taken in windows of consecutive positions;
// within each window the samples whose files the node's cache tier holds (when the window is
// first needed) come first, then the others, each run in its shuffled order. So the rank reads
// exactly the samples the plan gives it, in as many steps: only the order within its windows
// changes, and what that costs in randomness is counted (docs/caching.md): sample pairs whose
// order differs from the uniform shuffle (Kendall's tau distance) and samples moved.
//
// Reader threads ask for positions concurrently and a little ahead of each other; windows are
// made on first need, three kept at a time, read without a lock once made.

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "metrics/tier_stats.hpp"
#include "plan/epoch_plan.hpp"
#include "plan/layout.hpp"
#include "engine/cache/tier_directory.hpp"

namespace trainio::engine {

class CacheAwareOrder {
 public:
  // `window`: positions per window; it must exceed the positions reader threads read ahead of
  // the slowest of them (window_for()).
  CacheAwareOrder(const plan::EpochPlan& plan, const plan::DatasetLayout& layout, plan::Split split,
                  const TierDirectory& tier, std::uint64_t window);

  // The window size for a loader that keeps `batches_ahead` batches of `batch` samples in flight.
  static std::uint64_t window_for(std::uint64_t batch, std::uint64_t batches_ahead);

  plan::SampleRef sample(std::uint64_t step, std::uint64_t slot);

  // Adds what the order gave up to `stats`, over the windows made (every window by the end of a
  // phase that ran all its steps).
  void account(metrics::TierStats& stats) const;

 private:
  struct Window {
    std::atomic<std::uint64_t> made{~0ULL};  // the window index this slot holds, once made
    std::vector<std::uint32_t> order;        // position in the window -> position in the uniform order
  };
  const Window& window(std::uint64_t index);
  void make(std::uint64_t index, Window& w);

  const plan::EpochPlan& plan_;
  const plan::DatasetLayout& layout_;
  plan::Split split_;
  const TierDirectory& tier_;
  std::uint64_t window_, positions_;
  std::mutex making_;
  std::array<Window, 3> windows_;
  std::vector<char> resident_;               // under making_
  std::uint64_t inversions_ = 0, moved_ = 0, made_ = 0;  // under making_; made_: positions ordered
};

}  // namespace trainio::engine
