#pragma once
// Which sample each rank reads at each step of an epoch. Pure and O(1) per lookup: the global
// order is a seeded permutation evaluated point by point, so no rank holds an index of the
// dataset. By construction every sample is read at most once per epoch, all but an explicit
// remainder exactly once, and every rank runs the same number of steps.
//
// Order: files (shuffled when file_shuffle is on), the samples of each file in order, then the
// whole list permuted when sample_shuffle is on. Partition: the first steps*batch*ranks positions
// of that order are dealt to ranks in turn (position k -> rank k % ranks), as PyTorch's
// DistributedSampler does; the rest is dropped and reported, so no rank waits on another.

#include <cstdint>

#include "config/workload.hpp"
#include "plan/layout.hpp"
#include "util/permutation.hpp"

namespace trainio::plan {

struct SampleRef {
  std::uint64_t file = 0;    // file index within the split
  std::uint64_t sample = 0;  // sample index within the file
  bool operator==(const SampleRef&) const = default;
};

// The seed of an epoch's shuffles: train.seed (+ epoch when seed_change_epoch), or for
// shuffle "random" the run's random seed (+ epoch).
std::uint64_t epoch_seed(const config::Workload& w, std::uint64_t run_seed, std::uint64_t epoch);

class EpochPlan {
 public:
  // `epoch` counts from 1. `batch_size` is the per-rank batch of this phase (train or eval).
  // `step_cap`, when > 0, limits the steps of this epoch (total_training_steps left).
  EpochPlan(const DatasetLayout& layout, Split split, const config::Workload& w, std::uint64_t batch_size,
            std::uint64_t epoch, int rank, int ranks, std::uint64_t run_seed, std::int64_t step_cap = -1);

  std::uint64_t steps() const { return steps_; }
  std::uint64_t batch_size() const { return batch_; }
  // Samples no rank reads this epoch (the remainder that does not fill a step on every rank).
  std::uint64_t dropped_samples() const { return total_samples_ - steps_ * batch_ * static_cast<std::uint64_t>(ranks_); }
  std::uint64_t total_samples() const { return total_samples_; }

  // The sample this rank reads at `step`, position `slot` of the batch.
  SampleRef sample(std::uint64_t step, std::uint64_t slot) const {
    return at_position((step * batch_ + slot) * static_cast<std::uint64_t>(ranks_) + static_cast<std::uint64_t>(rank_));
  }

  // The sample at a position of the epoch's global order (any rank's view).
  SampleRef at_position(std::uint64_t position) const;

 private:
  std::uint64_t samples_per_file_;
  std::uint64_t total_samples_;
  std::uint64_t batch_;
  std::uint64_t steps_;
  int rank_;
  int ranks_;
  bool shuffle_files_;
  bool shuffle_samples_;
  util::Permutation file_order_;
  util::Permutation sample_order_;
};

// Steps per rank in one epoch, before any step cap: floor(samples / (batch * ranks)).
std::uint64_t steps_per_epoch(std::uint64_t samples, std::uint64_t batch_size, int ranks);

}  // namespace trainio::plan
