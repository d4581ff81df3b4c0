#pragma once
// TensorFlow's input pipeline over TFRecord files replayed with threads, stage by stage as DLIO
// builds it:
//   list_files       left out: TensorFlow access()es every file of the split on every rank every
//                    epoch; the dataset marker vouches for the files instead (a missing one is an
//                    error when its stream opens it)
//   shard            files i = rank, rank + ranks, ... of the epoch's file order (record-level
//                    sharding after the shuffle when there are fewer files than ranks)
//   TFRecordDataset  read_threads interleave slots (cycle_length), each a thread streaming its
//                    files through a transfer_size buffer; records come out round robin
//   shuffle          a buffer of shuffle_size records (when sample_shuffle is on)
//   batch            batch_size records, the remainder dropped
//   map              computation_threads threads spend preprocess_time per record of a batch
//   prefetch         prefetch_size batches ready ahead of the training loop
// Each phase starts the pipeline afresh (DLIO rebuilds it every epoch) and stops it at the end,
// whatever was read ahead.

#include <array>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "engine/load/batch_wait.hpp"
#include "engine/load/loader.hpp"
#include "metrics/histogram.hpp"
#include "metrics/io_recorder.hpp"
#include "plan/epoch_plan.hpp"

namespace trainio::engine {

class TensorflowLoader final : public Loader {
 public:
  // `polling_budget_ns`: how next() waits for a batch (engine/load/batch_wait.hpp).
  TensorflowLoader(const config::Workload& w, const plan::DatasetLayout& layout, std::int64_t polling_budget_ns = 0);
  ~TensorflowLoader() override;

  void start(const PhaseWork& work) override;
  Batch next() override;
  void finish() override;
  void collect(metrics::ReadPhase& phase) override;

 private:
  // Records a slot hands over at once (up to 128): the sample bytes of each. TensorFlow hands
  // over records one by one (2 buffered per slot); handing many at once keeps small records
  // (BERT's 2.5 KB) from being limited by thread hand-offs.
  struct Chunk {
    std::vector<std::uint64_t> records;
    bool last = false;  // the slot has streamed all its files
  };
  static constexpr std::size_t kChunksPerSlot = 2;  // TensorFlow's buffer_output_elements
  struct Slot {
    // Filled by the slot's thread, drained by the pipeline: a ring of kChunksPerSlot chunks,
    // and the drained chunks' record vectors handed back for reuse (no allocation per chunk).
    std::array<Chunk, kChunksPerSlot> ready;
    std::size_t ready_first = 0, ready_count = 0;
    std::vector<std::vector<std::uint64_t>> spare;
    metrics::IoRecorder io;
    metrics::Histogram record_ns;
  };
  struct Ready {
    std::uint64_t batch = ~0ULL;
    bool done = false;
    Batch result;
  };

  void stream_main(std::size_t slot);
  void pipeline_main();
  void map_main();
  // Queues `chunk` for the pipeline and leaves in it an empty chunk to fill (a reused vector).
  bool hand_over(std::size_t slot, Chunk& chunk);
  bool emit(std::uint64_t batch, const Batch& result);
  void fail(std::exception_ptr error);
  void halt_locked();  // stops every thread of the phase; the caller holds mutex_

  const config::Workload& w_;
  const plan::DatasetLayout& layout_;
  std::size_t cycle_;        // interleave slots (read_threads, at least 1)
  std::size_t map_threads_;  // computation_threads
  std::size_t buffer_bytes_;

  PhaseWork work_;
  std::uint64_t steps_ = 0;
  std::optional<plan::FileStreams> streams_;  // the rank's files this epoch
  std::size_t window_ = 1;  // batches produced ahead of the training loop
  bool mapping_ = false;    // preprocess time is spent by map threads

  std::mutex mutex_;
  std::condition_variable space_cv_;  // slot threads: room in their queue
  std::condition_variable data_cv_;   // pipeline: a chunk arrived
  std::condition_variable window_cv_; // pipeline: the training loop consumed a batch
  std::condition_variable map_cv_;    // map threads: a batch to map
  std::condition_variable ready_cv_;  // training loop: a batch is ready
  BatchWait wait_;                    // how the training loop waits on ready_cv_
  bool halt_ = false;
  std::exception_ptr error_;
  std::vector<Slot> slots_;
  std::vector<Ready> ready_;  // ring of window_ batches
  std::deque<std::uint64_t> to_map_;
  std::uint64_t consumed_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace trainio::engine
