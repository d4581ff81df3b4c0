#pragma once
// The loaders that read batch by batch, built on the ordered batch pipeline (batch_pipeline.hpp):
// one BatchReader per worker thread (or one for the training thread when there are none), and a
// design that says which worker reads which samples in which order. loader.cpp holds the designs
// that replay PyTorch's DataLoader, DALI's pipeline and DLIO's TensorFlow generator threads.

#include <memory>
#include <vector>

#include "engine/load/batch_pipeline.hpp"
#include "engine/load/batch_reader.hpp"
#include "engine/load/loader.hpp"

namespace trainio::engine {

struct LoaderDesign {
  std::size_t workers = 0;  // reader threads; 0: the training thread reads each batch when it asks
  std::size_t window = 1;   // batches read ahead of the training loop
  BatchPipeline::Assignment assignment = BatchPipeline::Assignment::worker_per_batch;
  // shared_queue: each batch is read in min(workers, batch size) parts, one per free worker.
  bool split_batches = false;
  // The pipeline's batch b is the plan's step plan::thread_slice_step(b, steps, workers): each
  // worker walks a contiguous slice of the rank's steps (DLIO's TensorFlow generator threads).
  bool thread_slices = false;
  format::ReaderUse use = format::ReaderUse::by_index;
  std::int64_t polling_budget_ns = 0;  // how the training loop waits for a batch (engine/load/batch_wait.hpp)
};

class PipelinedLoader final : public Loader {
 public:
  PipelinedLoader(const config::Workload& w, const plan::DatasetLayout& layout, const LoaderDesign& design,
                  CacheTier* tier = nullptr);

  void start(const PhaseWork& work) override;
  Batch next() override;
  void finish() override;
  void collect(metrics::ReadPhase& phase) override;

  const LoaderDesign& design() const { return design_; }

 private:
  Batch read(std::size_t worker, std::uint64_t batch, std::uint64_t part, std::uint64_t parts);

  LoaderDesign design_;
  std::vector<std::unique_ptr<BatchReader>> readers_;
  // Written by start() before the pipeline starts, read by the workers after they take a batch
  // (the pipeline's lock orders the two); finish() returns only when no worker reads it.
  PhaseWork work_;
  BatchPipeline pipeline_;  // last: its workers are joined before the readers go
};

}  // namespace trainio::engine
