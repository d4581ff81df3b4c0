#pragma once
// PyTorch's DataLoader replayed with threads: `read_threads` workers; batch b is read by worker
// b % workers, sample after sample; at most prefetch_factor batches per worker are in flight
// (prefetch_factor = ceil(prefetch_size / read_threads)); batches are handed to the training loop
// in order. With read_threads 0 the training thread reads each batch itself when it asks.
//
// The same machinery replays DLIO's TensorFlow loader for formats other than TFRecord
// (Order::thread_slices): read_threads generator threads each walk a contiguous slice of the
// rank's samples, keeping files open for samples_per_file samples, and tf.data interleaves their
// batches round robin -- batch b comes from thread b % threads, its (b / threads)-th batch.

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/batch_reader.hpp"
#include "engine/loader.hpp"

namespace trainio::engine {

class PytorchLoader final : public Loader {
 public:
  enum class Order { round_robin, thread_slices };
  PytorchLoader(const config::Workload& w, const plan::DatasetLayout& layout, Order order = Order::round_robin);
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
  Batch read(std::size_t reader, const PhaseWork& work, std::uint64_t batch);
  void wake_all_workers();

  Order order_;
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
