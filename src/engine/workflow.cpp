#include "engine/workflow.hpp"

#include <random>

#include "engine/checkpoint/checkpointer.hpp"
#include "engine/generate/generator.hpp"
#include "engine/step_spill.hpp"
#include "engine/trainer.hpp"
#include "storage/s3/s3_endpoint.hpp"
#include "plan/layout.hpp"
#include "plan/run_plan.hpp"
#include "util/clock.hpp"

namespace trainio::engine {

std::uint64_t choose_run_seed(const config::Workload& w, const mpi::Comm& comm) {
  const bool random = w.reader.file_shuffle == config::Shuffle::random ||
                      w.reader.sample_shuffle == config::Shuffle::random;
  if (!random) return w.train.seed;
  std::int64_t seed = 0;
  if (comm.is_root()) {
    std::random_device device;
    seed = static_cast<std::int64_t>((static_cast<std::uint64_t>(device()) << 32) ^ device());
  }
  return static_cast<std::uint64_t>(comm.broadcast(seed));
}

metrics::RankRecord run_workflow(const config::Workload& w, const mpi::Comm& comm, const WorkflowOptions& options) {
  metrics::RankRecord record;
  record.start = util::wall_time_iso();
  record.process_start_ns = util::process_start_ns();
  storage::s3::set_endpoint_rank(comm.rank());  // with several S3 endpoints, rank r uses r % N
  const plan::DatasetLayout layout(w);
  const bool train = w.workflow.train && !options.generate_only;
  // Infeasible plans (too few samples for the ranks) fail before any I/O.
  const plan::RunShape shape = train ? plan::shape_run(w, layout, comm.size()) : plan::RunShape{};
  // A synthetic dataset has no files: nothing to generate, check or delete.
  const bool has_files = w.dataset.format != config::Format::synthetic;
  if (has_files && (w.workflow.generate_data || options.generate_only))
    record.generate = generate_dataset(w, layout, comm, {options.force, options.progress});
  if (train) {
    if (has_files && !record.generate.ran) check_dataset(w, layout, comm);
    if (!options.step_log_folder.empty())
      record.steps = std::make_shared<StepSpill>(options.step_log_folder, comm.rank());
    TrainOptions to;
    to.run_seed = choose_run_seed(w, comm);
    to.progress = options.progress && comm.is_root();
    to.on_epoch = options.on_epoch;
    to.on_checkpoint = options.on_checkpoint;
    engine::train(w, layout, shape, comm, to, record);
    if (has_files && !w.dataset.keep_files) remove_dataset(w, layout, comm);
  } else if (w.workflow.checkpoint && !options.generate_only) {
    run_checkpoints(w, comm, choose_run_seed(w, comm), record, options.on_checkpoint, options.progress && comm.is_root(),
                    options.saved_ranks);
  }
  record.end = util::wall_time_iso();
  return record;
}

}  // namespace trainio::engine
