#include "engine/checkpoint/async_checkpointer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/together.hpp"
#include "metrics/trace.hpp"
#include "storage/fs.hpp"
#include "storage/io_observer.hpp"
#include "util/clock.hpp"
#include "util/kernel_touch.hpp"

namespace trainio::engine {

std::uint64_t async_buffer_size(std::uint64_t cap, std::uint64_t shard_bytes, std::uint64_t inflight) {
  if (shard_bytes == 0) return 0;
  const std::uint64_t pages_cap = std::max<std::uint64_t>(cap / 4096, 1);
  const std::uint64_t pages_need = (shard_bytes + 4095) / 4096;
  // async_inflight shards when they fit under the cap, computed without overflowing.
  const std::uint64_t pages = pages_need > pages_cap / std::max<std::uint64_t>(inflight, 1) ? pages_cap
                                                                                           : pages_need * inflight;
  return std::min(pages, pages_cap) * 4096;
}

std::int64_t snapshot_ns_at(std::uint64_t bytes, std::uint64_t bandwidth) {
  if (bandwidth == 0) return 0;
  const double ns = static_cast<double>(bytes) * 1e9 / static_cast<double>(bandwidth);
  return static_cast<std::int64_t>(std::ceil(ns));
}

// The writer's calls go to the save's recorder as save()'s do; each write also frees its bytes
// of the host buffer, which a staged snapshot waits for.
class AsyncCheckpointer::FlushObserver final : public storage::IoObserver {
 public:
  FlushObserver(metrics::IoRecorder& rec, AsyncCheckpointer& owner) : rec_(rec), owner_(owner) {}
  void on_op(const storage::OpEvent& e) override {
    rec_.on_op(e);
    if (e.op == storage::Op::write && e.bytes > 0) owner_.flushed(e.bytes);
  }
  void on_request(const storage::RequestEvent& e) override { rec_.on_request(e); }

 private:
  metrics::IoRecorder& rec_;
  AsyncCheckpointer& owner_;
};

AsyncCheckpointer::AsyncCheckpointer(Checkpointer& checkpointer, const config::CheckpointSection& c, const mpi::Comm& comm)
    : ck_(checkpointer),
      comm_(comm),
      bandwidth_(c.snapshot_bandwidth),
      inflight_(static_cast<std::size_t>(std::max<std::int64_t>(1, c.async_inflight))),
      shard_(checkpointer.own_file_bytes()),
      capacity_(async_buffer_size(c.async_buffer_bytes, shard_, inflight_)) {
  // Touched now: a first touch during the snapshot would time page faults, not the copy.
  util::resize_touched(buffer_, capacity_);  // by the kernel too: the writer thread's write()s read it
  source_.assign(std::min<std::uint64_t>(capacity_, 16u << 20), static_cast<char>(0x5A));
  writer_ = std::thread([this] { writer_loop(); });
}

AsyncCheckpointer::~AsyncCheckpointer() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  writer_.join();
  for (const auto& job : jobs_) {
    ck_.remove_written(job->written);
    try {
      storage::remove_empty_dir(ck_.folder(job->rec.epoch, job->rec.step));
    } catch (...) {
      // Another rank's files may still be there: theirs remove them.
    }
  }
}

void AsyncCheckpointer::flushed(std::uint64_t bytes) {
  {
    const std::lock_guard lock(mutex_);
    flushed_ = std::min(flushed_ + bytes, flush_cap_);
  }
  changed_.notify_all();
}

std::exception_ptr AsyncCheckpointer::failure() const {
  const std::lock_guard lock(mutex_);
  return failure_;
}

bool AsyncCheckpointer::flushed_since(std::int64_t since_ns) const {
  return flushing_.load() || last_flush_end_.load() > since_ns;
}

void AsyncCheckpointer::writer_loop() {
  metrics::trace::name_thread("checkpoint writer");
  while (true) {
    Job* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      job = queue_.front();
      queue_.pop_front();
      flush_cap_ = job->end_offset;
      if (failure_) {  // the run is ending: write nothing more
        job->failure = failure_;
        job->finished = true;
        changed_.notify_all();
        continue;
      }
    }
    flushing_.store(true);
    const std::int64_t t0 = util::now_ns();
    std::exception_ptr failure;
    metrics::CheckpointRecord& rec = job->rec;
    try {
      FlushObserver observe(rec.io, *this);
      const storage::ScopedObserver scope(&observe);
      ck_.write_own(rec.epoch, rec.step, rec.index, rec, job->written);
    } catch (...) {
      failure = std::current_exception();
    }
    const std::int64_t t1 = util::now_ns();
    last_flush_end_.store(t1);
    flushing_.store(false);
    {
      const std::lock_guard lock(mutex_);
      rec.async.flush_start_ns = t0;
      rec.async.flush_end_ns = t1;
      job->failure = failure;
      job->finished = true;
      if (!failure) flushed_ = std::max(flushed_, job->end_offset);  // all of it is out of the buffer
      if (failure && !failure_) failure_ = failure;
    }
    changed_.notify_all();
  }
}

void AsyncCheckpointer::snapshot(std::uint64_t bytes, Job* job) {
  // Pieces of at most 16 MiB, each paced to the snapshot's rate; a piece that does not fit in the
  // buffer waits for the flush to write out as much (a shard larger than the buffer is staged).
  const std::uint64_t piece_max = std::max<std::uint64_t>(1, std::min<std::uint64_t>(capacity_, 16u << 20));
  bool handed = false;
  auto hand_over = [&] {
    {
      const std::lock_guard lock(mutex_);
      queue_.push_back(job);
    }
    changed_.notify_all();
    handed = true;
  };
  std::uint64_t done = 0;
  while (done < bytes) {
    const std::uint64_t n = std::min(piece_max, bytes - done);
    std::uint64_t at = 0;
    {
      std::unique_lock lock(mutex_);
      if (occupied() + n > capacity_ && !handed) {
        // The buffer is full: the flush must start for the snapshot to go on.
        lock.unlock();
        hand_over();
        lock.lock();
      }
      changed_.wait(lock, [&] { return occupied() + n <= capacity_ || failure_ != nullptr; });
      if (failure_) break;  // the flush failed: the run ends at the next agreement
      at = snapshotted_ % capacity_;
    }
    const std::int64_t t_piece = util::now_ns();
    for (std::uint64_t copied = 0; copied < n;) {
      const std::uint64_t room = std::min(capacity_ - (at + copied) % capacity_, n - copied);
      const std::uint64_t len = std::min<std::uint64_t>(room, source_.size());
      std::memcpy(buffer_.data() + (at + copied) % capacity_, source_.data(), len);
      copied += len;
    }
    util::sleep_until_ns(t_piece + snapshot_ns_at(n, bandwidth_));
    {
      const std::lock_guard lock(mutex_);
      snapshotted_ += n;
    }
    done += n;
  }
  if (!handed) hand_over();
}

void AsyncCheckpointer::save(std::uint64_t epoch, std::uint64_t step, std::uint64_t index, std::uint64_t block,
                             const Done& done) {
  std::vector<metrics::CheckpointRecord> ready;
  const std::int64_t t0 = util::now_ns();
  while (jobs_.size() >= inflight_) complete_oldest(ready);
  const std::int64_t t1 = util::now_ns();
  auto job = std::make_unique<Job>();
  job->rec = Checkpointer::new_save(epoch, step, index);
  job->rec.block = block;
  job->rec.async.on = true;
  job->rec.async.buffer_bytes = capacity_;
  job->stall_start_ns = t0;
  job->slot_wait_ns = t1 - t0;
  stream_end_ += shard_;
  job->end_offset = stream_end_;
  Job* raw = job.get();
  jobs_.push_back(std::move(job));
  snapshot(shard_, raw);
  const std::int64_t t2 = util::now_ns();
  raw->snapshot_ns = t2 - t1;
  metrics::trace::span("stall", "checkpoint", t0, t2, fmt::format(R"("index":{},"step":{})", index, step));
  for (auto& r : ready) done(r);
}

void AsyncCheckpointer::drain(const Done& done) {
  std::vector<metrics::CheckpointRecord> ready;
  while (!jobs_.empty()) complete_oldest(ready);
  for (auto& r : ready) done(r);
}

void AsyncCheckpointer::complete_oldest(std::vector<metrics::CheckpointRecord>& ready) {
  Job* job = jobs_.front().get();
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return job->finished; });
  }
  const int failing = comm_.agree(job->failure == nullptr);
  if (failing >= 0) {
    // Nothing of a failed checkpoint stays behind to be mistaken for a whole one.
    ck_.remove_written(job->written);
    job->written.clear();
    comm_.barrier();
    if (comm_.is_root()) storage::remove_empty_dir(ck_.folder(job->rec.epoch, job->rec.step));
    settle(comm_, failing, job->failure);
  }
  const std::int64_t t_agreed = util::now_ns();
  metrics::CheckpointRecord& r = job->rec;
  r.async.stall_start_ns = job->stall_start_ns;
  r.async.slot_wait_ns = job->slot_wait_ns;
  r.async.snapshot_ns = job->snapshot_ns;
  // The save's span is its flush: from the writer's start to the end of its last call.
  r.start_ns = r.async.flush_start_ns;
  r.start = util::wall_time_iso_of(r.async.flush_start_ns);
  r.end = util::wall_time_iso_of(r.async.flush_end_ns);
  r.seconds = r.io_seconds = util::ns_to_s(r.async.flush_end_ns - r.async.flush_start_ns);
  r.collective_seconds = util::ns_to_s(t_agreed - r.async.flush_start_ns);
  metrics::trace::span("save", "checkpoint", r.async.flush_start_ns, r.async.flush_end_ns,
                       fmt::format(R"("index":{},"step":{},"async":true)", r.index, r.step));
  ready.push_back(std::move(r));
  jobs_.pop_front();
}

}  // namespace trainio::engine
