#pragma once
// Asynchronous checkpoints (checkpoint.async, docs/checkpoints.md): at the checkpoint step the
// training thread copies the rank's shard into a host buffer at checkpoint.snapshot_bandwidth
// (the GPU-to-host snapshot), then hands the save to a writer thread, which writes the same files
// with the same calls as Checkpointer::save while the following steps read their batches. At most
// async_inflight saves are in flight; a new one first waits for the oldest to end. The ranks agree
// on a save's outcome only at collective points (a slot needed, drain()), and a writer's failure
// also reaches the training loop's per-step vote (failure()).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "config/workload.hpp"
#include "engine/checkpoint/checkpointer.hpp"
#include "metrics/run_record.hpp"
#include "mpi/comm.hpp"
#include "util/page_aligned.hpp"

namespace trainio::engine {

// The host buffer's size: the configured cap, or what async_inflight shards need when less,
// rounded up to a page; a rank that writes nothing holds none.
std::uint64_t async_buffer_size(std::uint64_t cap, std::uint64_t shard_bytes, std::uint64_t inflight);

// The time a snapshot of `bytes` takes at `bandwidth` bytes/s, in nanoseconds (rounded up).
std::int64_t snapshot_ns_at(std::uint64_t bytes, std::uint64_t bandwidth);

class AsyncCheckpointer {
 public:
  // Called (collectively, on every rank) with each save once the ranks agreed it succeeded.
  using Done = std::function<void(metrics::CheckpointRecord&)>;

  AsyncCheckpointer(Checkpointer& checkpointer, const config::CheckpointSection& c, const mpi::Comm& comm);
  // Stops the writer after its current file and removes the files of every save not agreed
  // complete: nothing half-written stays to be taken for a checkpoint. No collective call.
  ~AsyncCheckpointer();
  AsyncCheckpointer(const AsyncCheckpointer&) = delete;
  AsyncCheckpointer& operator=(const AsyncCheckpointer&) = delete;

  // Collective. Takes save `index` of (epoch, step): waits for a slot, snapshots, hands it over.
  // `done` is called for saves that completed meanwhile (after the stall is measured).
  void save(std::uint64_t epoch, std::uint64_t step, std::uint64_t index, std::uint64_t block, const Done& done);
  // Collective: waits for every flush and completes them in order. Throws if one failed.
  void drain(const Done& done);
  // A flush that failed on this rank, for the training loop's vote; null while none did.
  std::exception_ptr failure() const;
  // Whether a flush ran at some moment since `since_ns` (one is running, or one ended after it).
  bool flushed_since(std::int64_t since_ns) const;
  std::uint64_t buffer_bytes() const { return capacity_; }

 private:
  struct Job {
    metrics::CheckpointRecord rec;
    std::vector<std::string> written;
    std::exception_ptr failure;
    bool finished = false;
    std::int64_t stall_start_ns = 0, slot_wait_ns = 0, snapshot_ns = 0;
    std::uint64_t end_offset = 0;  // where its bytes end in the run's stream through the buffer
  };
  class FlushObserver;
  void writer_loop();
  void snapshot(std::uint64_t bytes, Job* job);
  // Collective: waits for the oldest save's flush, agrees on it; a failure removes its files and throws.
  void complete_oldest(std::vector<metrics::CheckpointRecord>& ready);
  void flushed(std::uint64_t bytes);
  // Snapshot bytes not yet written out (mutex_ held).
  std::uint64_t occupied() const { return snapshotted_ > flushed_ ? snapshotted_ - flushed_ : 0; }

  Checkpointer& ck_;
  const mpi::Comm& comm_;
  std::uint64_t bandwidth_;
  std::size_t inflight_;
  std::uint64_t shard_;
  std::uint64_t capacity_;
  util::Bytes buffer_;
  util::Bytes source_;  // stands for the accelerator's memory the snapshot copies from

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Job>> jobs_;  // in flight, oldest first, until the ranks agreed on them
  std::deque<Job*> queue_;                 // handed to the writer, not begun
  // Bytes into and out of the buffer over the run. The writer generates the bytes it writes, so it
  // may run ahead of the snapshot: what it frees is capped at the end of the save it writes.
  std::uint64_t snapshotted_ = 0, flushed_ = 0;
  std::uint64_t flush_cap_ = 0;   // the end offset of the save being written
  std::uint64_t stream_end_ = 0;  // the end offset of the last save taken
  bool stop_ = false;
  std::exception_ptr failure_;
  std::atomic<bool> flushing_{false};
  std::atomic<std::int64_t> last_flush_end_{0};
  std::thread writer_;
};

}  // namespace trainio::engine
