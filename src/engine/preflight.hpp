#pragma once
// What a run checks before anything is written or any request is made, for a job of `ranks`
// ranks: `trainio run` for its own job, `trainio sweep` for every point before the first runs
// (docs/usage.md promises exit 2 at once for a point that cannot run).

#include "config/workload.hpp"
#include "plan/run_plan.hpp"

namespace trainio::engine {

// Throws the error (a config error: exit 2) of the first check that fails: the format's writer
// and reader are built, its layout fits (HDF5, image sizes), the dataset gives every rank a step,
// the model's checkpoint layout fits the ranks, an S3 workload has its endpoint and credentials,
// and a local cache tier's folder resolves outside the dataset. Returns the run's shape (empty
// when it does not train). `saved_ranks`: the ranks of the job whose checkpoints a load-only run
// reads (0: this run's); the load's layout must fit this run's ranks and the model.
plan::RunShape preflight(const config::Workload& w, int ranks, bool generate_only, int saved_ranks = 0);

}  // namespace trainio::engine
