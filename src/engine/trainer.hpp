#pragma once
// The training loop: epochs of steps (wait for a batch, emulate the accelerator's compute, then
// wait for every rank, which stands in for the gradient all-reduce), with evaluation phases
// between epochs as DLIO schedules them.

#include <functional>

#include "config/workload.hpp"
#include "metrics/run_record.hpp"
#include "mpi/comm.hpp"
#include "plan/layout.hpp"
#include "plan/run_plan.hpp"

namespace trainio::engine {

struct TrainOptions {
  std::uint64_t run_seed = 0;
  bool progress = false;  // progress lines during long phases (rank 0)
  // Called on every rank after each epoch (collective calls are allowed: all ranks call it).
  // It is handed the epoch's measurements, which the record keeps no longer: summarise them here.
  std::function<void(const metrics::EpochRecord&)> on_epoch;
  // Called on every rank after each checkpoint (collective calls are allowed), as on_epoch.
  std::function<void(const metrics::CheckpointRecord&)> on_checkpoint;
};

// Collective. Appends each epoch's timeline to `record`, and its checkpoints'.
void train(const config::Workload& w, const plan::DatasetLayout& layout, const plan::RunShape& shape,
           const mpi::Comm& comm, const TrainOptions& options, metrics::RankRecord& record);

}  // namespace trainio::engine
