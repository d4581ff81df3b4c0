#pragma once
// A whole run as the workload's workflow section asks: generate, then train (with evaluation and
// checkpoints), then delete the dataset if keep_files is false; or, with checkpoint but no
// train, the checkpoint-only run (saves, eviction, loads).

#include <functional>
#include <string>

#include "config/workload.hpp"
#include "metrics/run_record.hpp"
#include "mpi/comm.hpp"

namespace trainio::engine {

struct WorkflowOptions {
  bool generate_only = false;  // `trainio generate`: generation whatever the workflow says
  bool force = false;          // generate into a folder that is not a trainio dataset
  bool progress = true;
  // Where training spills its step log (the results folder); empty: the log stays in memory.
  std::string step_log_folder;
  // The ranks of the job whose checkpoints a checkpoint-only run loads (--resume-from; 0: this run's).
  int saved_ranks = 0;
  // Each epoch's and checkpoint's measurements, as it ends (TrainOptions): summarise them there.
  std::function<void(const metrics::EpochRecord&)> on_epoch;
  std::function<void(const metrics::CheckpointRecord&)> on_checkpoint;
};

// Collective. Returns this rank's record: its epochs' and checkpoints' timelines, its
// generation and staging (their measurements went to on_epoch and on_checkpoint).
metrics::RankRecord run_workflow(const config::Workload& w, const mpi::Comm& comm, const WorkflowOptions& options);

// The seed of a run: train.seed, or a fresh random seed (the same on all ranks) when a shuffle
// is "random". Collective.
std::uint64_t choose_run_seed(const config::Workload& w, const mpi::Comm& comm);

}  // namespace trainio::engine
