#pragma once
// PyTorch's DataLoader replayed with threads: `read_threads` workers; batch b is read by worker
// b % workers, sample after sample; at most prefetch_factor batches per worker are in flight
// (prefetch_factor = ceil(prefetch_size / read_threads)); batches are handed to the training loop
// in order. With read_threads 0 the training thread reads each batch itself when it asks.

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/loader.hpp"
#include "format/format.hpp"

namespace trainio::engine {

// Reads the samples of one batch; one per thread, owning that thread's buffers and recorders.
class BatchReader {
 public:
  BatchReader(const config::Workload& w, const plan::DatasetLayout& layout);
  Batch read(const PhaseWork& work, std::uint64_t batch);
  void collect(metrics::ReadPhase& phase);

 private:
  const plan::DatasetLayout& layout_;
  std::unique_ptr<format::SampleReader> reader_;
  std::string path_;  // reused: no allocation per sample
  std::vector<std::string> paths_;                 // for readers that take whole batches
  std::vector<format::SampleRequest> requests_;
  metrics::IoRecorder io_;
  metrics::Histogram sample_ns_;
  std::uint64_t samples_ = 0, bytes_ = 0, preprocess_index_ = 0;
};

class PytorchLoader final : public Loader {
 public:
  PytorchLoader(const config::Workload& w, const plan::DatasetLayout& layout);
  ~PytorchLoader() override;

  void start(const PhaseWork& work) override;
  Batch next() override;
  void finish() override;
  void collect(metrics::ReadPhase& phase) override;

  std::size_t workers() const { return readers_.size(); }
  std::size_t in_flight_limit() const { return window_; }

 private:
  struct Slot {
    std::uint64_t batch = ~0ULL;
    bool done = false;
    Batch result;
    std::exception_ptr error;
  };
  void worker_main(std::size_t id);
  void wake_all_workers();

  std::vector<std::unique_ptr<BatchReader>> readers_;  // one per worker, or one for the main thread
  std::vector<std::thread> threads_;
  std::size_t window_ = 1;  // batches in flight: prefetch_factor x workers

  std::mutex mutex_;
  // One condition per worker: a consumed batch frees exactly one new batch, and only its worker
  // is woken (waking all of them costs the training thread its core on a busy node).
  std::vector<std::unique_ptr<std::condition_variable>> work_cv_;
  std::condition_variable done_cv_;
  PhaseWork work_;
  std::uint64_t phase_ = 0;      // changes at every start(), so workers restart their batch count
  bool active_ = false;
  bool stopping_ = false;
  std::uint64_t steps_ = 0;
  std::uint64_t consumed_ = 0;   // batches handed to the training loop
  std::uint64_t allowed_ = 0;    // batches below this may be started
  std::size_t busy_ = 0;         // workers reading a batch now
  std::vector<Slot> slots_;      // ring of window_ results
};

}  // namespace trainio::engine
