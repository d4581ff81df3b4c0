#include "engine/preflight.hpp"

#include <fmt/format.h>

#include "format/format.hpp"
#include "plan/checkpoint_plan.hpp"
#include "plan/reshard.hpp"
#include "plan/layout.hpp"
#include "storage/fs.hpp"
#include "storage/s3/s3_endpoint.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace trainio::engine {

namespace {

// The workload's check compares the folders as written; through a symbolic link a cache folder
// can still be the dataset's (its copies would land among the data files).
void check_cache_folder(const config::Workload& w, const plan::DatasetLayout& layout) {
  if (w.cache.tier != config::CacheTier::local_ssd || !w.workflow.train) return;
  const std::string cache = storage::resolved_path(w.cache.path), data = storage::resolved_path(layout.root());
  if (util::is_within(cache, data) || util::is_within(data, cache))
    throw config_error(fmt::format("cache.path '{}' and the data folder '{}' overlap once links are resolved ('{}' and "
                                   "'{}'): the tier's copies would mix with the dataset",
                                   w.cache.path, layout.root(), cache, data),
                       "give cache.path a folder outside the data folder (and not one that contains it)");
}

}  // namespace

plan::RunShape preflight(const config::Workload& w, int ranks, bool generate_only, int saved_ranks) {
  const plan::DatasetLayout layout(w);
  // Building a writer or reader is cheap and throws a clear error for what is not built yet.
  if (w.dataset.format != config::Format::synthetic && (generate_only || w.workflow.generate_data)) format::make_writer(w);
  if (!generate_only && w.workflow.train) format::make_reader(w);
  format::check_workload(w, layout);
  plan::RunShape shape;
  if (w.workflow.train && !generate_only) shape = plan::shape_run(w, layout, ranks);
  // A model layout that does not fit the ranks fails before any I/O.
  if (w.workflow.checkpoint && !generate_only) {
    const int saved = plan::saved_rank_count(w, ranks, saved_ranks);
    plan::CheckpointPlan(w, saved);
    const bool loads = !w.workflow.train && w.checkpoint.num_checkpoints_read > 0;
    if (loads) plan::load_layout(w, ranks, saved);
    const auto& lp = w.checkpoint.load_parallelism;
    if (!loads && (lp.tensor > 0 || lp.pipeline > 0 || lp.data > 0))
      throw config_error("checkpoint.load_parallelism is set, but the run loads no checkpoint",
                         "set checkpoint.num_checkpoints_read (a checkpoint-only run, workflow.train=False), or drop "
                         "checkpoint.load_parallelism");
  }
  // The endpoint and credentials, the environment's included.
  if (w.storage.storage_type == config::StorageType::s3) storage::s3::endpoint_of(w.storage.storage_options);
  check_cache_folder(w, layout);
  return shape;
}

}  // namespace trainio::engine
