#include "plan/run_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "plan/epoch_plan.hpp"
#include "util/checked.hpp"
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
  // In closed form: a run of 10^12 epochs is planned at once, not epoch by epoch.
  const auto epochs = static_cast<std::uint64_t>(w.train.epochs);
  const std::uint64_t per_epoch = s.train_steps_per_epoch;
  if (w.train.total_training_steps > 0) {
    const auto cap = static_cast<std::uint64_t>(w.train.total_training_steps);
    const std::uint64_t epochs_to_cap = cap / per_epoch + (cap % per_epoch ? 1 : 0);
    s.epochs = std::min(epochs, epochs_to_cap);
    s.total_train_steps = s.epochs == epochs_to_cap ? cap : s.epochs * per_epoch;  // below cap: no overflow
  } else {
    const auto total = util::checked_mul(per_epoch, epochs);
    if (!total)
      throw config_error(fmt::format("train.epochs = {} x {} steps per epoch per rank is more steps than trainio can "
                                     "count (2^63 - 1)",
                                     epochs, per_epoch),
                         "use fewer epochs, or cap the run with train.total_training_steps");
    s.epochs = epochs;
    s.total_train_steps = *total;
  }
  // Evaluations after epochs first, first + every, ... up to the last epoch (evaluates_after).
  if (w.workflow.evaluation) {
    const auto first = static_cast<std::uint64_t>(w.evaluation.eval_after_epoch);
    const auto every = static_cast<std::uint64_t>(w.evaluation.epochs_between_evals);
    s.evaluations = s.epochs >= first ? (s.epochs - first) / every + 1 : 0;
  }
  return s;
}

std::string few_steps_warning(const RunShape& shape, const config::Workload& w) {
  if (!w.workflow.train || shape.epochs == 0) return {};
  // The shortest epoch (a step cap can shorten the last), and the blocks checkpoints cut it into.
  std::uint64_t steps = std::min(shape.train_steps_per_epoch, train_steps_in_epoch(shape, w, shape.epochs));
  const bool by_checkpoints = w.workflow.checkpoint && w.checkpoint.steps_between_checkpoints > 0 &&
                              static_cast<std::uint64_t>(w.checkpoint.steps_between_checkpoints) < steps;
  if (by_checkpoints) steps = static_cast<std::uint64_t>(w.checkpoint.steps_between_checkpoints);
  const auto excluded = static_cast<std::uint64_t>(w.output.exclude_start_steps + w.output.exclude_end_steps);
  if (steps > 2 + excluded) return {};
  const std::string what = by_checkpoints ? fmt::format("{} training steps per block between checkpoints", steps)
                                          : fmt::format("{} training steps per epoch per rank", steps);
  if (steps <= 2)
    return fmt::format("{}: DLIO's throughput (steps - 2) x batch / T has no value below 3 steps, so "
                       "train_throughput_*, train_io_* and train_au_meet_expectation will be null (no verdict){}; "
                       "use more samples, a smaller reader.batch_size or fewer ranks",
                       what, steps <= excluded ? ", and with output.metric.exclude_*_steps = " + std::to_string(excluded) +
                                                     " no step is left for AU either"
                                               : "");
  if (steps <= excluded)
    return fmt::format("{}, no more than output.metric.exclude_*_steps = {}: no step is left for DLIO's AU, so "
                       "train_au_* and train_au_meet_expectation will be null; use more steps or exclude fewer",
                       what, excluded);
  return fmt::format("{}, {} of them left out (output.metric.exclude_*_steps): DLIO's AU and throughput rest on {} step{}",
                     what, excluded, steps - excluded, steps - excluded == 1 ? "" : "s");
}

std::uint64_t train_steps_in_epoch(const RunShape& shape, const config::Workload& w, std::uint64_t epoch) {
  const std::uint64_t per_epoch = shape.train_steps_per_epoch;
  if (w.train.total_training_steps <= 0) return per_epoch;
  const auto cap = static_cast<std::uint64_t>(w.train.total_training_steps);
  const std::uint64_t before = per_epoch * (epoch - 1);
  return before >= cap ? 0 : std::min(per_epoch, cap - before);
}

}  // namespace trainio::plan
