#pragma once
// DALI's pipeline as DLIO drives it: one pipeline per rank whose queue holds prefetch_size
// batches (2 when 0, as DLIO sets it), filled in order; the samples of each batch are shared out
// among read_threads workers (DALI's parallel external_source gives each worker a part of the
// batch), and the training loop takes the batches in order. With data_loader dali each sample is
// read by the framework reader's read_index (open, read, close); native_dali reads with DALI's
// own readers, one read of the sample's bytes (access: sample). read_threads 0: the training
// thread reads each batch itself when it asks (DALI's serial external source).

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/batch_reader.hpp"
#include "engine/loader.hpp"

namespace trainio::engine {

class DaliLoader final : public Loader {
 public:
  DaliLoader(const config::Workload& w, const plan::DatasetLayout& layout);
  ~DaliLoader() override;

  void start(const PhaseWork& work) override;
  Batch next() override;
  void finish() override;
  void collect(metrics::ReadPhase& phase) override;

 private:
  struct Slot {
    std::uint64_t batch = ~0ULL;
    std::size_t parts_left = 0;
    Batch result;
    std::exception_ptr error;
  };
  void worker_main(std::size_t id);

  std::vector<std::unique_ptr<BatchReader>> readers_;
  std::vector<std::thread> threads_;
  std::size_t window_;  // batches in the pipeline's queue

  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  PhaseWork work_;
  bool active_ = false;
  bool stopping_ = false;
  std::uint64_t steps_ = 0;
  std::uint64_t parts_ = 1;      // parts per batch: min(workers, batch size)
  std::uint64_t next_unit_ = 0;  // (batch, part) units handed out: batch = unit / parts_
  std::uint64_t consumed_ = 0;
  std::size_t busy_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace trainio::engine
