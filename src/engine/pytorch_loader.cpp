#include "engine/pytorch_loader.hpp"


#include <fmt/format.h>

#include "util/error.hpp"

namespace trainio::engine {

PytorchLoader::PytorchLoader(const config::Workload& w, const plan::DatasetLayout& layout, Order order)
    : order_(order) {
  // tf.data has no "read in the training thread": DLIO turns read_threads 0 into 1 for it.
  const auto workers = static_cast<std::size_t>(order == Order::thread_slices ? std::max<std::int64_t>(1, w.reader.read_threads)
                                                                               : w.reader.read_threads);
  const std::size_t readers = workers == 0 ? 1 : workers;
  const auto use = order == Order::thread_slices ? format::ReaderUse::by_file_session : format::ReaderUse::by_index;
  for (std::size_t i = 0; i < readers; ++i)
    readers_.push_back(std::make_unique<BatchReader>(layout, format::make_reader(w, use)));
  if (workers == 0) return;
  // PyTorch: prefetch_factor batches per worker (DLIO: ceil(prefetch_size / read_threads), >= 1).
  const auto prefetch = static_cast<std::size_t>(w.reader.prefetch_size);
  const std::size_t factor = std::max<std::size_t>(1, (prefetch + workers - 1) / workers);
  window_ = factor * workers;
  slots_.resize(window_);
  for (std::size_t i = 0; i < workers; ++i) work_cv_.push_back(std::make_unique<std::condition_variable>());
  for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this, i] { worker_main(i); });
}

PytorchLoader::~PytorchLoader() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_all_workers();
  for (auto& t : threads_) t.join();
}

Batch PytorchLoader::read(std::size_t reader, const PhaseWork& work, std::uint64_t batch) {
  if (order_ == Order::round_robin) return readers_[reader]->read(work, batch);
  return readers_[reader]->read(work, plan::thread_slice_step(batch, work.plan->steps(), readers_.size()));
}

void PytorchLoader::wake_all_workers() {
  for (auto& cv : work_cv_) cv->notify_one();
}

void PytorchLoader::worker_main(std::size_t id) {
  const std::size_t workers = readers_.size();  // fixed before any worker starts
  std::uint64_t my_phase = 0, k = 0;
  std::unique_lock lock(mutex_);
  while (true) {
    std::uint64_t batch = 0;
    work_cv_[id]->wait(lock, [&] {
      if (stopping_) return true;
      if (!active_) return false;
      if (phase_ != my_phase) {
        my_phase = phase_;
        k = 0;
      }
      batch = id + k * workers;
      return batch < steps_ && batch < allowed_;
    });
    if (stopping_) return;
    const PhaseWork work = work_;
    ++busy_;
    lock.unlock();
    Batch result;
    std::exception_ptr error;
    try {
      result = read(id, work, batch);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    --busy_;
    slots_[batch % window_] = Slot{batch, true, result, error};
    ++k;
    done_cv_.notify_all();
  }
}

void PytorchLoader::start(const PhaseWork& work) {
  if (threads_.empty()) {
    work_ = work;
    steps_ = work.plan->steps();
    consumed_ = 0;
    return;
  }
  {
    std::lock_guard lock(mutex_);
    work_ = work;
    steps_ = work.plan->steps();
    consumed_ = 0;
    allowed_ = window_;
    for (auto& s : slots_) s = Slot{};
    ++phase_;
    active_ = true;
  }
  wake_all_workers();
}

Batch PytorchLoader::next() {
  if (threads_.empty()) return read(0, work_, consumed_++);
  Slot slot;
  std::uint64_t freed = 0;  // the batch this consumption allows to start
  {
    std::unique_lock lock(mutex_);
    const std::uint64_t b = consumed_;
    if (b >= steps_) throw internal_error("the training loop asked for more batches than the epoch has");
    Slot& s = slots_[b % window_];
    done_cv_.wait(lock, [&] { return s.done && s.batch == b; });
    slot = std::move(s);
    s = Slot{};
    ++consumed_;
    allowed_ = consumed_ + window_;
    freed = allowed_ - 1;
  }
  if (freed < steps_) work_cv_[freed % work_cv_.size()]->notify_one();
  if (slot.error) std::rethrow_exception(slot.error);
  return slot.result;
}

void PytorchLoader::finish() {
  if (threads_.empty()) return;
  std::unique_lock lock(mutex_);
  allowed_ = 0;  // no new batches; let the ones in flight complete
  done_cv_.wait(lock, [&] { return busy_ == 0; });
  active_ = false;
}

void PytorchLoader::collect(metrics::ReadPhase& phase) {
  std::lock_guard lock(mutex_);  // workers are idle after finish(); the lock orders their writes
  for (auto& r : readers_) r->collect(phase);
}

}  // namespace trainio::engine
