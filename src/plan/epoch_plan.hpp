#pragma once
// Which sample each rank reads at each step of an epoch. Pure and O(1) per lookup: orders are
// seeded permutations evaluated point by point, so no rank holds an index of the dataset. By
// construction every sample is read at most once per epoch, all but an explicit remainder exactly
// once, and every rank runs the same number of steps.
//
// Three ways to share samples among ranks:
//  - strided (PyTorch's DistributedSampler; shuffle_scope: global): one global order — files,
//    shuffled when file_shuffle is on, their samples in order, the whole list permuted when
//    sample_shuffle is on — dealt to ranks in turn (position k -> rank k % ranks), reshuffled
//    every epoch: any rank may read any sample.
//  - local files (shuffle_scope: local): rank r owns files r, r + ranks, ... for the whole run
//    and shuffles its own files and samples every epoch.
//  - contiguous shards (DALI's readers): rank r reads the r-th contiguous slice of the samples
//    in file order, the same slice every epoch, shuffled within it.
// Steps: the most every rank can fill with its own samples; the rest is dropped and reported.

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

// Consecutive slots of a step that read samples of one file at a fixed stride: slot + i reads
// sample first.sample + i * stride of first.file, for i < count. Readers that hold what several
// samples need (a Parquet row group) serve a run in one go instead of sample by sample.
struct SampleRun {
  SampleRef first;
  std::uint64_t stride = 1, count = 1;
};

// file_streams: TensorFlow's input pipeline: ranks take whole files (file i -> rank i % ranks
// of the epoch's file order) and stream them; with fewer files than ranks every rank streams
// every file and keeps every ranks-th record. Which records a step gets is decided as the
// streams flow (see engine/load/tensorflow_loader.cpp); the plan gives the steps.
enum class Partition { strided, local_files, contiguous, file_streams };

// The partition a workload's loader and shuffle scope imply.
Partition partition_of(const config::Workload& w);

// The seed of an epoch's shuffles: train.seed (+ epoch when seed_change_epoch), or for
// shuffle "random" the run's random seed (+ epoch).
std::uint64_t epoch_seed(const config::Workload& w, std::uint64_t run_seed, std::uint64_t epoch);

// The files this rank streams in an epoch (Partition::file_streams), in order, computed one by
// one (a list would cost memory in proportion to the files), and whether records are shared out
// instead of files (fewer files than ranks: every rank streams every file).
class FileStreams {
 public:
  FileStreams(const DatasetLayout& layout, Split split, const config::Workload& w, std::uint64_t epoch, int rank,
              int ranks, std::uint64_t run_seed);
  std::uint64_t size() const { return count_; }
  std::uint64_t operator[](std::uint64_t i) const;  // file index within the split; i < size()
  bool record_sharded() const { return record_sharded_; }

 private:
  bool shuffle_ = false;
  util::Permutation order_;  // the epoch's file order, when shuffled
  std::uint64_t first_ = 0, stride_ = 1, count_ = 0;  // this rank's positions in that order
  bool record_sharded_ = false;
};

// DLIO's TensorFlow generators: `threads` threads each take a contiguous run of the rank's
// steps (thread t the t-th run) and tf.data interleaves their batches, so batch `batch` is the
// (batch / threads)-th step of thread batch % threads. Returns the plan step it reads.
std::uint64_t thread_slice_step(std::uint64_t batch, std::uint64_t steps, std::uint64_t threads);

// Steps per rank in one epoch, before any step cap.
std::uint64_t steps_per_epoch(Partition p, std::uint64_t files, std::uint64_t samples_per_file,
                              std::uint64_t batch_size, int ranks);

class EpochPlan {
 public:
  // `epoch` counts from 1. `batch_size` is the per-rank batch of this phase (train or eval).
  // `step_cap`, when >= 0, limits the steps of this epoch (total_training_steps left).
  EpochPlan(const DatasetLayout& layout, Split split, const config::Workload& w, std::uint64_t batch_size,
            std::uint64_t epoch, int rank, int ranks, std::uint64_t run_seed, std::int64_t step_cap = -1,
            Partition partition = Partition::strided);

  std::uint64_t steps() const { return steps_; }
  std::uint64_t batch_size() const { return batch_; }
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  // Samples no rank reads this epoch.
  std::uint64_t dropped_samples() const { return total_samples_ - steps_ * batch_ * static_cast<std::uint64_t>(ranks_); }

  // The sample this rank reads at `step`, position `slot` of the batch.
  SampleRef sample(std::uint64_t step, std::uint64_t slot) const;
  // The same, remembering the last file looked up in the file order in `files` (a reader's own):
  // consecutive samples of a file then cost no evaluation of that order.
  SampleRef sample(std::uint64_t step, std::uint64_t slot, util::Permutation::Memo& files) const;
  // The run of samples starting at `slot` of `step`, ending at slot `end` at the latest
  // (end > slot): as long as the samples stay in one file and in order; one sample when they
  // are shuffled.
  SampleRun run(std::uint64_t step, std::uint64_t slot, std::uint64_t end, util::Permutation::Memo& files) const;

 private:
  SampleRef sample_at(std::uint64_t step, std::uint64_t slot, util::Permutation::Memo* files) const;
  SampleRef strided(std::uint64_t position, util::Permutation::Memo* files) const;
  SampleRef local_file(std::uint64_t index, util::Permutation::Memo* files) const;
  SampleRef contiguous(std::uint64_t index) const;
  std::uint64_t file_in_order(std::uint64_t position, util::Permutation::Memo* files) const;

  Partition partition_;
  std::uint64_t files_;
  std::uint64_t samples_per_file_;
  std::uint64_t total_samples_;
  std::uint64_t batch_;
  std::uint64_t steps_;
  int rank_;
  int ranks_;
  bool shuffle_files_;
  bool shuffle_samples_;
  std::uint64_t owned_files_ = 0;   // local files: this rank's files
  std::uint64_t shard_first_ = 0;   // contiguous: this rank's slice of the samples
  std::uint64_t shard_size_ = 0;
  util::Permutation file_order_;
  util::Permutation sample_order_;
};

}  // namespace trainio::plan
