#pragma once
// The shape of a whole run for a given number of ranks: steps per epoch, what is dropped, when
// evaluation happens, how many steps a step cap leaves. Used to run, and by `trainio config` to
// show the derived figures before any I/O.

#include <cstdint>
#include <string>

#include "config/workload.hpp"
#include "plan/layout.hpp"

namespace trainio::plan {

struct RunShape {
  int ranks = 1;
  std::uint64_t train_samples = 0;           // in the dataset
  std::uint64_t train_steps_per_epoch = 0;   // per rank, before the step cap
  std::uint64_t train_dropped_per_epoch = 0; // samples no rank reads in an epoch
  std::uint64_t eval_samples = 0;
  std::uint64_t eval_steps = 0;              // per rank, per evaluation
  std::uint64_t eval_dropped = 0;
  std::uint64_t epochs = 0;                  // epochs that run (the step cap can end the run early)
  std::uint64_t total_train_steps = 0;       // per rank, whole run
  std::uint64_t evaluations = 0;
  std::uint64_t files_per_rank_max = 0;      // files a rank generates (most loaded rank)
};

// Throws a config error when the dataset cannot give every rank at least one step.
RunShape shape_run(const config::Workload& w, const DatasetLayout& layout, int ranks);

// Training steps of epoch `epoch` (1-based) on every rank, after the run's step cap.
std::uint64_t train_steps_in_epoch(const RunShape& shape, const config::Workload& w, std::uint64_t epoch);

// A warning when DLIO's training figures will rest on too few steps: with 2 or fewer steps in
// an epoch (or in a block between checkpoints) DLIO's throughput (steps - 2) / T has no value; with
// no more steps than output.metric.exclude_*_steps, AU has none; a few more, and they rest on a
// step or two. Empty when the steps are enough.
std::string few_steps_warning(const RunShape& shape, const config::Workload& w);

// Whether evaluation runs after epoch `epoch` (1-based), as DLIO schedules it.
bool evaluates_after(const config::Workload& w, std::uint64_t epoch);

}  // namespace trainio::plan
