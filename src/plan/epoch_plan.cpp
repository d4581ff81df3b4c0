#include "plan/epoch_plan.hpp"

#include <algorithm>

#include "util/checked.hpp"
#include "util/rng.hpp"

namespace trainio::plan {

Partition partition_of(const config::Workload& w) {
  if (w.reader.data_loader == config::DataLoader::dali || w.reader.data_loader == config::DataLoader::native_dali)
    return Partition::contiguous;
  if (w.reader.data_loader == config::DataLoader::tensorflow)
    return w.dataset.format == config::Format::tfrecord ? Partition::file_streams : Partition::contiguous;
  return w.reader.shuffle_scope == config::ShuffleScope::local ? Partition::local_files : Partition::strided;
}

std::uint64_t epoch_seed(const config::Workload& w, std::uint64_t run_seed, std::uint64_t epoch) {
  const std::uint64_t base = w.reader.file_shuffle == config::Shuffle::random ||
                                     w.reader.sample_shuffle == config::Shuffle::random
                                 ? run_seed
                                 : w.train.seed;
  return w.train.seed_change_epoch ? base + epoch : base;
}

std::uint64_t steps_per_epoch(Partition p, std::uint64_t files, std::uint64_t samples_per_file,
                              std::uint64_t batch_size, int ranks) {
  const auto r = static_cast<std::uint64_t>(ranks);
  // files x samples_per_file is bounded by config::check_sizes(); batch x ranks is not: a step
  // of more samples than trainio can count is no step.
  const auto per_step = util::checked_mul(batch_size, r);
  if (batch_size == 0 || r == 0 || !per_step) return 0;
  switch (p) {
    case Partition::strided: return files * samples_per_file / *per_step;
    case Partition::local_files: return files / r * samples_per_file / batch_size;       // the rank with fewest files
    case Partition::contiguous: return files * samples_per_file / r / batch_size;        // the smallest slice
    case Partition::file_streams:
      return files >= r ? files / r * samples_per_file / batch_size : files * samples_per_file / r / batch_size;
  }
  return 0;
}

std::uint64_t thread_slice_step(std::uint64_t batch, std::uint64_t steps, std::uint64_t threads) {
  const std::uint64_t thread = batch % threads;
  std::uint64_t before = 0;  // steps of the threads ahead of this one
  for (std::uint64_t t = 0; t < thread && t < steps; ++t) before += (steps - t + threads - 1) / threads;
  return before + batch / threads;
}

FileStreams::FileStreams(const DatasetLayout& layout, Split split, const config::Workload& w, std::uint64_t epoch,
                         int rank, int ranks, std::uint64_t run_seed) {
  const std::uint64_t n = layout.num_files(split);
  const auto r = static_cast<std::uint64_t>(rank), size = static_cast<std::uint64_t>(ranks);
  shuffle_ = w.reader.file_shuffle != config::Shuffle::off;
  if (shuffle_) order_ = util::Permutation(n, util::derive_seed(epoch_seed(w, run_seed, epoch), 6, split == Split::train ? 0 : 1));
  record_sharded_ = n < size;
  if (record_sharded_) {
    count_ = n;
  } else {
    first_ = r;
    stride_ = size;
    count_ = strided_count(n, r, size);
  }
}

std::uint64_t FileStreams::operator[](std::uint64_t i) const {
  const std::uint64_t position = first_ + i * stride_;
  return shuffle_ ? order_(position) : position;
}

EpochPlan::EpochPlan(const DatasetLayout& layout, Split split, const config::Workload& w, std::uint64_t batch_size,
                     std::uint64_t epoch, int rank, int ranks, std::uint64_t run_seed, std::int64_t step_cap,
                     Partition partition)
    : partition_(partition),
      files_(layout.num_files(split)),
      samples_per_file_(layout.samples_per_file()),
      total_samples_(layout.num_samples(split)),
      batch_(batch_size),
      rank_(rank),
      ranks_(ranks),
      shuffle_files_(w.reader.file_shuffle != config::Shuffle::off),
      shuffle_samples_(w.reader.sample_shuffle != config::Shuffle::off) {
  steps_ = steps_per_epoch(partition, files_, samples_per_file_, batch_, ranks_);
  if (step_cap >= 0 && static_cast<std::uint64_t>(step_cap) < steps_) steps_ = static_cast<std::uint64_t>(step_cap);
  const std::uint64_t seed = epoch_seed(w, run_seed, epoch);
  const std::uint64_t split_tag = split == Split::train ? 0 : 1;
  const auto r = static_cast<std::uint64_t>(rank), n = static_cast<std::uint64_t>(ranks);
  switch (partition) {
    case Partition::strided:
      if (shuffle_files_) file_order_ = util::Permutation(files_, util::derive_seed(seed, 1, split_tag));
      if (shuffle_samples_) sample_order_ = util::Permutation(total_samples_, util::derive_seed(seed, 2, split_tag));
      break;
    case Partition::local_files:
      owned_files_ = files_ / n + (r < files_ % n ? 1 : 0);
      if (shuffle_files_) file_order_ = util::Permutation(owned_files_, util::derive_seed(seed, 3 + 4 * r, split_tag));
      if (shuffle_samples_)
        sample_order_ = util::Permutation(owned_files_ * samples_per_file_, util::derive_seed(seed, 4 + 4 * r, split_tag));
      break;
    case Partition::file_streams:
      owned_files_ = files_ / n + (r < files_ % n ? 1 : 0);
      break;
    case Partition::contiguous:
      shard_first_ = total_samples_ * r / n;
      shard_size_ = total_samples_ * (r + 1) / n - shard_first_;
      if (shuffle_samples_) sample_order_ = util::Permutation(shard_size_, util::derive_seed(seed, 5 + 4 * r, split_tag));
      break;
  }
}

SampleRef EpochPlan::sample(std::uint64_t step, std::uint64_t slot) const { return sample_at(step, slot, nullptr); }

SampleRef EpochPlan::sample(std::uint64_t step, std::uint64_t slot, util::Permutation::Memo& files) const {
  return sample_at(step, slot, &files);
}

SampleRun EpochPlan::run(std::uint64_t step, std::uint64_t slot, std::uint64_t end, util::Permutation::Memo& files) const {
  SampleRun run{sample_at(step, slot, &files), 1, 1};
  if (shuffle_samples_ || partition_ == Partition::file_streams) return run;
  // Unshuffled, a rank's samples run through each file in order: strided every ranks-th of them.
  const std::uint64_t left_in_file = samples_per_file_ - run.first.sample;
  if (partition_ == Partition::strided) {
    run.stride = static_cast<std::uint64_t>(ranks_);
    run.count = (left_in_file - 1) / run.stride + 1;
  } else {
    run.count = left_in_file;
  }
  run.count = std::min(run.count, end - slot);
  return run;
}

SampleRef EpochPlan::sample_at(std::uint64_t step, std::uint64_t slot, util::Permutation::Memo* files) const {
  const std::uint64_t i = step * batch_ + slot;  // this rank's i-th sample of the epoch
  switch (partition_) {
    case Partition::strided: return strided(i * static_cast<std::uint64_t>(ranks_) + static_cast<std::uint64_t>(rank_), files);
    case Partition::local_files: return local_file(i, files);
    case Partition::contiguous: return contiguous(i);
    case Partition::file_streams: return local_file(i, files);  // the loader streams files; not used
  }
  return {};
}

std::uint64_t EpochPlan::file_in_order(std::uint64_t position, util::Permutation::Memo* files) const {
  if (!shuffle_files_) return position;
  return files ? file_order_(position, *files) : file_order_(position);
}

SampleRef EpochPlan::strided(std::uint64_t position, util::Permutation::Memo* files) const {
  const std::uint64_t k = shuffle_samples_ ? sample_order_(position) : position;
  return {file_in_order(k / samples_per_file_, files), k % samples_per_file_};
}

SampleRef EpochPlan::local_file(std::uint64_t index, util::Permutation::Memo* files) const {
  const std::uint64_t k = shuffle_samples_ ? sample_order_(index) : index;
  const std::uint64_t owned = file_in_order(k / samples_per_file_, files);
  return {static_cast<std::uint64_t>(rank_) + owned * static_cast<std::uint64_t>(ranks_), k % samples_per_file_};
}

SampleRef EpochPlan::contiguous(std::uint64_t index) const {
  const std::uint64_t k = shard_first_ + (shuffle_samples_ ? sample_order_(index) : index);
  return {k / samples_per_file_, k % samples_per_file_};
}

}  // namespace trainio::plan
