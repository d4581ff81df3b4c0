#include "engine/load/batch_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "metrics/trace.hpp"
#include "util/clock.hpp"
#include "util/host_cpu.hpp"
#include "util/proc_stats.hpp"
#include "util/error.hpp"

namespace trainio::engine {

BatchPipeline::BatchPipeline(std::size_t workers, std::size_t window, Assignment assignment, ReadPart read,
                             std::int64_t polling_budget_ns)
    : assignment_(assignment), read_(std::move(read)), window_(std::max<std::size_t>(1, window)),
      batch_wait_(polling_budget_ns) {
  if (workers == 0) return;
  slots_.resize(window_);
  const std::size_t conditions = assignment == Assignment::worker_per_batch ? workers : 1;
  for (std::size_t i = 0; i < conditions; ++i) work_cv_.push_back(std::make_unique<std::condition_variable>());
  tids_.assign(workers, 0);
  for (std::size_t i = 0; i < workers; ++i)
    threads_.emplace_back([this, i] {
      metrics::trace::name_thread(fmt::format("reader {}", i));
      {
        std::lock_guard lock(mutex_);
        tids_[i] = util::current_thread_id();
      }
      done_cv_.notify_all();
      worker_main(i);
    });
  // Every worker's id known before the first phase: its run delay is measured from its start.
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [&] { return std::all_of(tids_.begin(), tids_.end(), [](int t) { return t != 0; }); });
}

BatchPipeline::~BatchPipeline() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  for (auto& cv : work_cv_) cv->notify_all();
  for (auto& t : threads_) t.join();
}

bool BatchPipeline::take_locked(std::size_t worker, Unit& unit) {
  if (!active_) return false;
  const std::uint64_t limit = std::min(batches_, consumed_ + window_);
  if (assignment_ == Assignment::worker_per_batch) {
    // This worker's batches are worker, worker + W, ...: the first one no slot holds yet.
    const std::uint64_t w = threads_.size();
    std::uint64_t batch = worker;
    if (consumed_ > worker) batch += (consumed_ - worker + w - 1) / w * w;
    while (batch < limit && slots_[batch % window_].batch == batch) batch += w;
    if (batch >= limit) return false;
    unit = Unit{batch, 0};
  } else {
    const std::uint64_t batch = next_unit_ / parts_;
    if (batch >= limit) return false;
    unit = Unit{batch, next_unit_ % parts_};
    ++next_unit_;
  }
  Slot& slot = slots_[unit.batch % window_];
  if (slot.batch != unit.batch) slot = Slot{unit.batch, parts_, {}, nullptr};
  return true;
}

void BatchPipeline::worker_main(std::size_t id) {
  std::condition_variable& cv = *work_cv_[assignment_ == Assignment::worker_per_batch ? id : 0];
  std::unique_lock lock(mutex_);
  while (true) {
    Unit unit;
    cv.wait(lock, [&] { return stopping_ || take_locked(id, unit); });
    if (stopping_) return;
    const std::uint64_t parts = parts_;
    if (++busy_ == max_in_flight_) at_max_since_ = util::now_ns();
    lock.unlock();
    Batch result;
    std::exception_ptr error;
    const std::int64_t t0 = util::now_ns(), cpu0 = util::thread_cpu_ns();
    try {
      result = read_(id, unit.batch, unit.part, parts);
    } catch (...) {
      error = std::current_exception();
    }
    const std::int64_t cpu = util::thread_cpu_ns() - cpu0, t1 = util::now_ns();
    lock.lock();
    stats_.busy_ns += t1 - t0;
    stats_.cpu_ns += cpu;
    // At the maximum from at_max_since_ to this read's end, or not at all: while this worker
    // waited for the lock, another may have taken a unit and made the count whole again after t1.
    if (busy_-- == max_in_flight_) stats_.at_max_ns += std::max<std::int64_t>(0, t1 - at_max_since_);
    Slot& slot = slots_[unit.batch % window_];
    slot.result.samples += result.samples;
    slot.result.bytes += result.bytes;
    if (error && !slot.error) slot.error = error;
    if (--slot.parts_left == 0 || busy_ == 0) batch_wait_.signal(done_cv_);  // next() or finish() waits
  }
}

void BatchPipeline::wake_for_batch(std::uint64_t batch) {
  if (batch >= batches_) return;
  if (assignment_ == Assignment::worker_per_batch) {
    work_cv_[batch % work_cv_.size()]->notify_one();
  } else {
    for (std::uint64_t p = 0; p < parts_; ++p) work_cv_[0]->notify_one();
  }
}

void BatchPipeline::start(std::uint64_t batches, std::uint64_t parts) {
  std::lock_guard lock(mutex_);
  batches_ = batches;
  parts_ = assignment_ == Assignment::worker_per_batch ? 1 : std::max<std::uint64_t>(1, parts);
  consumed_ = 0;
  next_unit_ = 0;
  run_delay_at_start_ = run_delay_locked();
  max_in_flight_ = threads_.empty() ? 1 : static_cast<std::size_t>(std::min<std::uint64_t>(threads_.size(), window_ * parts_));
  for (auto& s : slots_) s = Slot{};
  active_ = !threads_.empty();
  for (auto& cv : work_cv_) cv->notify_all();
}

Batch BatchPipeline::next() {
  if (threads_.empty()) {
    if (consumed_ >= batches_) throw internal_error("the training loop asked for more batches than the epoch has");
    const std::int64_t t0 = util::now_ns(), cpu0 = util::thread_cpu_ns();
    Batch b = read_(0, consumed_++, 0, 1);
    const std::int64_t cpu = util::thread_cpu_ns() - cpu0, t1 = util::now_ns();
    stats_.busy_ns += t1 - t0;
    stats_.cpu_ns += cpu;
    stats_.at_max_ns += t1 - t0;
    return b;
  }
  Slot slot;
  std::uint64_t freed = 0;
  {
    std::unique_lock lock(mutex_);
    const std::uint64_t b = consumed_;
    if (b >= batches_) throw internal_error("the training loop asked for more batches than the epoch has");
    Slot& s = slots_[b % window_];
    batch_wait_.wait(lock, done_cv_, [&] { return s.batch == b && s.parts_left == 0; });
    slot = std::move(s);
    s = Slot{};
    ++consumed_;
    freed = consumed_ + window_ - 1;  // the batch that may start now
  }
  wake_for_batch(freed);  // batches_ and parts_ change only on this thread, in start()
  if (slot.error) std::rethrow_exception(slot.error);
  return slot.result;
}

std::int64_t BatchPipeline::run_delay_locked() const {
  if (threads_.empty()) return -1;
  std::int64_t sum = 0;
  for (const int tid : tids_) {
    const auto d = tid > 0 ? util::thread_run_delay_ns(tid) : std::nullopt;
    if (!d) return -1;
    sum += *d;
  }
  return sum;
}

BatchPipeline::ReadStats BatchPipeline::take_read_stats() {
  std::lock_guard lock(mutex_);
  ReadStats out = stats_;
  const std::int64_t now = run_delay_locked();
  out.run_delay_ns = now >= 0 && run_delay_at_start_ >= 0 ? now - run_delay_at_start_ : -1;
  out.threads = std::max<std::size_t>(1, threads_.size());
  out.max_in_flight = max_in_flight_;
  stats_ = ReadStats{};
  return out;
}

void BatchPipeline::finish() {
  if (threads_.empty()) return;
  std::unique_lock lock(mutex_);
  active_ = false;  // no new reads; let the ones in flight complete
  done_cv_.wait(lock, [&] { return busy_ == 0; });
}

}  // namespace trainio::engine
