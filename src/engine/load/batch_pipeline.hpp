#pragma once
// The ordered batch pipeline every loader that reads batch by batch shares: a pool of worker
// threads reads the batches of a phase ahead of the training loop, at most `window` batches
// ahead, and the training loop takes them strictly in order. A batch may be read whole by one
// worker or in parts by several. A read's error is rethrown to the training loop with its
// batch; finish() stops handing out work and waits for the reads in flight, so nothing the phase
// owns (its epoch plan) is touched after it returns; the destructor stops and joins the workers.
//
// Loaders differ only in which worker reads which batch and what a read does:
//  - worker_per_batch: batch b is read by worker b % workers, each worker's batches in order
//    (PyTorch's DataLoader; DLIO's TensorFlow generator threads);
//  - shared_queue: the parts of each batch, in order, go to whichever worker is free (DALI's
//    parallel external source).
// A freed slot wakes only the worker(s) that can use it: never the whole pool per batch.
// With no workers, next() reads the batch on the calling thread when it is asked for.

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/load/batch_wait.hpp"
#include "engine/load/loader.hpp"

namespace trainio::engine {

class BatchPipeline {
 public:
  enum class Assignment { worker_per_batch, shared_queue };
  // Reads part `part` of `parts` of batch `batch` on worker `worker` (0 on the calling thread
  // when there are no workers). Called without the pipeline's lock.
  using ReadPart = std::function<Batch(std::size_t worker, std::uint64_t batch, std::uint64_t part, std::uint64_t parts)>;

  // `polling_budget_ns`: how next() waits for a batch (engine/load/batch_wait.hpp).
  BatchPipeline(std::size_t workers, std::size_t window, Assignment assignment, ReadPart read,
                std::int64_t polling_budget_ns = 0);
  ~BatchPipeline();
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  // Begins a phase of `batches` batches, each read in `parts` parts (1 with worker_per_batch).
  void start(std::uint64_t batches, std::uint64_t parts = 1);
  // The next batch in order; blocks until all its parts are read; rethrows a part's error.
  Batch next();
  // Ends the phase, also midway: no new reads start, and it returns when none is in flight.
  void finish();

  // CPU time next() spent polling for batches (engine/load/batch_wait.hpp) since the last call.
  std::int64_t take_polling_cpu_ns() { return batch_wait_.take_polling_cpu_ns(); }
  // What the reads did since the last call (the bottleneck verdict's evidence): wall and thread
  // CPU time inside reads, summed over the threads that read, and the time all reads that may
  // be in flight were (max_in_flight: min(workers, window x parts); 1 without workers).
  struct ReadStats {
    std::size_t threads = 0, max_in_flight = 1;
    std::int64_t busy_ns = 0, cpu_ns = 0, at_max_ns = 0;
    // The workers' wait for a CPU while runnable over the phase (schedstat); -1: not known
    // (no workers, or the kernel does not say).
    std::int64_t run_delay_ns = -1;
  };
  ReadStats take_read_stats();

  std::size_t workers() const { return threads_.size(); }
  std::size_t window() const { return window_; }

 private:
  struct Unit {
    std::uint64_t batch = 0, part = 0;
  };
  struct Slot {
    std::uint64_t batch = ~0ULL;
    std::uint64_t parts_left = 0;
    Batch result;
    std::exception_ptr error;  // the first part's error
  };
  void worker_main(std::size_t id);
  bool take_locked(std::size_t worker, Unit& unit);
  void wake_for_batch(std::uint64_t batch);
  std::int64_t run_delay_locked() const;  // the workers' run delays' sum; -1 when one is unknown

  const Assignment assignment_;
  const ReadPart read_;
  std::size_t window_;
  std::vector<std::thread> threads_;

  // On a cache line of its own, with the state it guards: the workers write it at every part,
  // and must not evict what they read at every sample (the loader's phase, their readers).
  alignas(64) std::mutex mutex_;
  // worker_per_batch: one condition per worker; shared_queue: all wait on the first.
  std::vector<std::unique_ptr<std::condition_variable>> work_cv_;
  std::condition_variable done_cv_;  // a batch completed, or the last read in flight returned
  BatchWait batch_wait_;             // how next() waits on done_cv_
  bool active_ = false;              // reads may start
  bool stopping_ = false;
  std::uint64_t batches_ = 0, parts_ = 1;
  std::uint64_t consumed_ = 0;       // batches handed to the training loop
  std::uint64_t next_unit_ = 0;      // shared_queue: units handed out (batch = unit / parts_)
  std::size_t busy_ = 0;             // reads in flight
  std::size_t max_in_flight_ = 1;    // the most reads the phase lets be in flight
  std::int64_t at_max_since_ = 0;    // when busy_ reached max_in_flight_
  ReadStats stats_;                  // since take_read_stats()
  std::vector<int> tids_;            // the workers' thread ids, as they start
  std::int64_t run_delay_at_start_ = -1;  // their run delays' sum when the phase started
  std::vector<Slot> slots_;          // ring of window_ batches
};

}  // namespace trainio::engine
