#include "plan/run_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "plan/epoch_plan.hpp"
#include "util/error.hpp"

namespace trainio::plan {

bool evaluates_after(const config::Workload& w, std::uint64_t epoch) {
  if (!w.workflow.evaluation) return false;
  const auto first = static_cast<std::uint64_t>(w.evaluation.eval_after_epoch);
  const auto every = static_cast<std::uint64_t>(w.evaluation.epochs_between_evals);
  return epoch >= first && (epoch - first) % every == 0;
}

RunShape shape_run(const config::Workload& w, const DatasetLayout& layout, int ranks) {
  RunShape s;
  s.ranks = ranks;
  const auto batch = static_cast<std::uint64_t>(w.reader.batch_size);
  const auto r = static_cast<std::uint64_t>(ranks);
  s.train_samples = layout.num_samples(Split::train);
  const Partition partition = partition_of(w);
  s.train_steps_per_epoch = steps_per_epoch(partition, layout.num_files(Split::train), layout.samples_per_file(), batch, ranks);
  s.train_dropped_per_epoch = s.train_samples - s.train_steps_per_epoch * batch * r;
  s.files_per_rank_max = (layout.total_files() + r - 1) / r;
  if (w.workflow.train && s.train_steps_per_epoch == 0)
    throw config_error(
        fmt::format("the training set has {} samples ({} files x {}), too few for one step of reader.batch_size={} "
                    "on each of {} ranks (needs {}{})",
                    s.train_samples, layout.num_files(Split::train), layout.samples_per_file(), batch, ranks, batch * r,
                    partition == Partition::local_files ? ", and at least one file per rank with shuffle_scope local" : ""),
        "use more files or samples per file, a smaller batch, or fewer ranks");
  if (w.workflow.train && w.workflow.evaluation) {
    const auto eval_batch = static_cast<std::uint64_t>(w.reader.batch_size_eval);
    s.eval_samples = layout.num_samples(Split::eval);
    s.eval_steps = steps_per_epoch(partition, layout.num_files(Split::eval), layout.samples_per_file(), eval_batch, ranks);
    s.eval_dropped = s.eval_samples - s.eval_steps * eval_batch * r;
    if (s.eval_steps == 0)
      throw config_error(
          fmt::format("the evaluation set has {} samples, too few for one step of reader.batch_size_eval={} on each of {} ranks",
                      s.eval_samples, eval_batch, ranks),
          "raise dataset.num_files_eval, lower reader.batch_size_eval, or set workflow.evaluation=false");
  }
  if (!w.workflow.train) return s;
  const auto epochs = static_cast<std::uint64_t>(w.train.epochs);
  for (std::uint64_t e = 1; e <= epochs; ++e) {
    const std::uint64_t steps = train_steps_in_epoch(s, w, e);
    if (steps == 0) break;
    ++s.epochs;
    s.total_train_steps += steps;
    if (evaluates_after(w, e)) ++s.evaluations;
  }
  return s;
}

std::uint64_t train_steps_in_epoch(const RunShape& shape, const config::Workload& w, std::uint64_t epoch) {
  const std::uint64_t per_epoch = shape.train_steps_per_epoch;
  if (w.train.total_training_steps <= 0) return per_epoch;
  const auto cap = static_cast<std::uint64_t>(w.train.total_training_steps);
  const std::uint64_t before = per_epoch * (epoch - 1);
  return before >= cap ? 0 : std::min(per_epoch, cap - before);
}

}  // namespace trainio::plan
