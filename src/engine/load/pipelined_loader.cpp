#include "engine/load/pipelined_loader.hpp"

#include <algorithm>

#include "util/clock.hpp"

namespace trainio::engine {

PipelinedLoader::PipelinedLoader(const config::Workload& w, const plan::DatasetLayout& layout, const LoaderDesign& design,
                                 CacheTier* tier)
    : design_(design),
      readers_([&] {
        std::vector<std::unique_ptr<BatchReader>> readers;
        for (std::size_t i = 0; i < std::max<std::size_t>(1, design.workers); ++i)
          readers.push_back(std::make_unique<BatchReader>(layout, format::make_reader(w, design.use), tier));
        return readers;
      }()),
      pipeline_(design.workers, design.window, design.assignment,
                [this](std::size_t worker, std::uint64_t batch, std::uint64_t part, std::uint64_t parts) {
                  return read(worker, batch, part, parts);
                },
                design.polling_budget_ns) {}

Batch PipelinedLoader::read(std::size_t worker, std::uint64_t batch, std::uint64_t part, std::uint64_t parts) {
  const plan::EpochPlan& plan = *work_.plan;
  const std::uint64_t step = design_.thread_slices ? plan::thread_slice_step(batch, plan.steps(), readers_.size()) : batch;
  const std::uint64_t size = plan.batch_size();
  return readers_[worker]->read(work_, step, part * size / parts, (part + 1) * size / parts);
}

void PipelinedLoader::start(const PhaseWork& work) {
  work_ = work;
  for (auto& r : readers_) r->begin_epoch();
  const std::uint64_t parts =
      design_.split_batches ? std::min<std::uint64_t>(design_.workers, work.plan->batch_size()) : 1;
  pipeline_.start(work.plan->steps(), parts);
}

Batch PipelinedLoader::next() { return pipeline_.next(); }

void PipelinedLoader::finish() { pipeline_.finish(); }

void PipelinedLoader::collect(metrics::ReadPhase& phase) {
  // After finish(): no worker reads, and the pipeline's lock ordered their writes before it returned.
  for (auto& r : readers_) r->collect(phase);
  phase.cpu_polling += util::ns_to_s(pipeline_.take_polling_cpu_ns());
  const BatchPipeline::ReadStats r = pipeline_.take_read_stats();
  phase.readers = metrics::ReadPhase::Readers{r.threads, r.max_in_flight, r.busy_ns, r.cpu_ns, r.at_max_ns, r.run_delay_ns};
}

}  // namespace trainio::engine
