#include "plan/epoch_plan.hpp"

#include "util/rng.hpp"

namespace trainio::plan {

std::uint64_t epoch_seed(const config::Workload& w, std::uint64_t run_seed, std::uint64_t epoch) {
  const std::uint64_t base = w.reader.file_shuffle == config::Shuffle::random ||
                                     w.reader.sample_shuffle == config::Shuffle::random
                                 ? run_seed
                                 : w.train.seed;
  return w.train.seed_change_epoch ? base + epoch : base;
}

std::uint64_t steps_per_epoch(std::uint64_t samples, std::uint64_t batch_size, int ranks) {
  const std::uint64_t per_step = batch_size * static_cast<std::uint64_t>(ranks);
  return per_step == 0 ? 0 : samples / per_step;
}

EpochPlan::EpochPlan(const DatasetLayout& layout, Split split, const config::Workload& w,
                     std::uint64_t batch_size, std::uint64_t epoch, int rank, int ranks,
                     std::uint64_t run_seed, std::int64_t step_cap)
    : samples_per_file_(layout.samples_per_file()),
      total_samples_(layout.num_samples(split)),
      batch_(batch_size),
      rank_(rank),
      ranks_(ranks),
      shuffle_files_(w.reader.file_shuffle != config::Shuffle::off),
      shuffle_samples_(w.reader.sample_shuffle != config::Shuffle::off) {
  steps_ = steps_per_epoch(total_samples_, batch_, ranks_);
  if (step_cap >= 0 && static_cast<std::uint64_t>(step_cap) < steps_) steps_ = static_cast<std::uint64_t>(step_cap);
  const std::uint64_t seed = epoch_seed(w, run_seed, epoch);
  const std::uint64_t split_tag = split == Split::train ? 0 : 1;
  if (shuffle_files_) file_order_ = util::Permutation(layout.num_files(split), util::derive_seed(seed, 1, split_tag));
  if (shuffle_samples_) sample_order_ = util::Permutation(total_samples_, util::derive_seed(seed, 2, split_tag));
}

SampleRef EpochPlan::at_position(std::uint64_t position) const {
  const std::uint64_t k = shuffle_samples_ ? sample_order_(position) : position;
  const std::uint64_t file_position = k / samples_per_file_;
  return {shuffle_files_ ? file_order_(file_position) : file_position, k % samples_per_file_};
}

}  // namespace trainio::plan
