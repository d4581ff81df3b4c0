#include "engine/dali_loader.hpp"

#include "util/error.hpp"

namespace trainio::engine {

DaliLoader::DaliLoader(const config::Workload& w, const plan::DatasetLayout& layout)
    : window_(static_cast<std::size_t>(w.reader.prefetch_size > 0 ? w.reader.prefetch_size : 2)) {
  const auto workers = static_cast<std::size_t>(w.reader.read_threads);
  for (std::size_t i = 0; i < std::max<std::size_t>(1, workers); ++i)
    readers_.push_back(std::make_unique<BatchReader>(layout, format::make_reader(w)));
  slots_.resize(window_);
  for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this, i] { worker_main(i); });
}

DaliLoader::~DaliLoader() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void DaliLoader::worker_main(std::size_t id) {
  std::unique_lock lock(mutex_);
  while (true) {
    work_cv_.wait(lock, [&] {
      if (stopping_) return true;
      const std::uint64_t batch = next_unit_ / parts_;
      return active_ && batch < steps_ && batch < consumed_ + window_;
    });
    if (stopping_) return;
    const std::uint64_t unit = next_unit_++;
    const std::uint64_t batch = unit / parts_, part = unit % parts_;
    const PhaseWork work = work_;
    const std::uint64_t size = work.plan->batch_size();
    Slot& slot = slots_[batch % window_];
    if (slot.batch != batch) slot = Slot{batch, parts_, {}, nullptr};
    ++busy_;
    lock.unlock();
    Batch result;
    std::exception_ptr error;
    try {
      result = readers_[id]->read(work, batch, part * size / parts_, (part + 1) * size / parts_);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    --busy_;
    slot.result.samples += result.samples;
    slot.result.bytes += result.bytes;
    if (error && !slot.error) slot.error = error;
    if (--slot.parts_left == 0) done_cv_.notify_all();
    if (busy_ == 0) done_cv_.notify_all();  // finish() may be waiting
  }
}

void DaliLoader::start(const PhaseWork& work) {
  std::lock_guard lock(mutex_);
  work_ = work;
  steps_ = work.plan->steps();
  parts_ = std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads_.size(), work.plan->batch_size()));
  next_unit_ = 0;
  consumed_ = 0;
  for (auto& s : slots_) s = Slot{};
  active_ = !threads_.empty();
  work_cv_.notify_all();
}

Batch DaliLoader::next() {
  if (threads_.empty()) return readers_[0]->read(work_, consumed_++);
  Slot slot;
  {
    std::unique_lock lock(mutex_);
    const std::uint64_t b = consumed_;
    if (b >= steps_) throw internal_error("the training loop asked for more batches than the epoch has");
    Slot& s = slots_[b % window_];
    done_cv_.wait(lock, [&] { return s.batch == b && s.parts_left == 0; });
    slot = s;
    s = Slot{};
    ++consumed_;
  }
  work_cv_.notify_all();
  if (slot.error) std::rethrow_exception(slot.error);
  return slot.result;
}

void DaliLoader::finish() {
  if (threads_.empty()) return;
  std::unique_lock lock(mutex_);
  active_ = false;  // no new parts; let the ones in flight complete
  done_cv_.wait(lock, [&] { return busy_ == 0; });
}

void DaliLoader::collect(metrics::ReadPhase& phase) {
  std::lock_guard lock(mutex_);
  for (auto& r : readers_) r->collect(phase);
}

}  // namespace trainio::engine
