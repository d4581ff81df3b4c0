#include "engine/pytorch_loader.hpp"

#include <fmt/format.h>

#include "storage/io_observer.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace trainio::engine {

// ---------------------------------------------------------------- BatchReader

BatchReader::BatchReader(const config::Workload& w, const plan::DatasetLayout& layout)
    : layout_(layout), reader_(format::make_reader(w)) {
  path_.reserve(layout.root().size() + 256);
}

Batch BatchReader::read(const PhaseWork& work, std::uint64_t batch) {
  storage::ScopedObserver observe(&io_);
  Batch out;
  const std::uint64_t size = work.plan->batch_size();
  if (reader_->reads_batches()) {
    // The reader overlaps the batch's reads: hand it the whole batch; each sample's latency is
    // then the batch's.
    paths_.resize(size);
    requests_.resize(size);
    for (std::uint64_t slot = 0; slot < size; ++slot) {
      const plan::SampleRef ref = work.plan->sample(batch, slot);
      layout_.path_into(work.split, ref.file, paths_[slot]);
      requests_[slot] = {&paths_[slot], layout_.sample_shape(work.split, ref.file), layout_.samples_per_file(), ref.sample};
    }
    const std::int64_t t0 = util::now_ns();
    out.bytes = reader_->read_batch(requests_);
    const std::int64_t t1 = util::now_ns();
    for (std::uint64_t slot = 0; slot < size; ++slot) sample_ns_.record(static_cast<std::uint64_t>(t1 - t0));
    out.samples = size;
    if (!work.preprocess.is_zero()) {
      std::int64_t at = t1;
      for (std::uint64_t slot = 0; slot < size; ++slot) at += static_cast<std::int64_t>(work.preprocess.at(batch * size + slot) * 1e9);
      util::sleep_until_ns(at);
    }
    samples_ += out.samples;
    bytes_ += out.bytes;
    return out;
  }
  for (std::uint64_t slot = 0; slot < size; ++slot) {
    const plan::SampleRef ref = work.plan->sample(batch, slot);
    layout_.path_into(work.split, ref.file, path_);
    const plan::SampleShape shape = layout_.sample_shape(work.split, ref.file);
    const std::int64_t t0 = util::now_ns();
    out.bytes += reader_->read(path_, shape, layout_.samples_per_file(), ref.sample);
    const std::int64_t t1 = util::now_ns();
    sample_ns_.record(static_cast<std::uint64_t>(t1 - t0));
    ++out.samples;
    if (!work.preprocess.is_zero())
      util::sleep_until_ns(t1 + static_cast<std::int64_t>(work.preprocess.at(batch * size + slot) * 1e9));
  }
  samples_ += out.samples;
  bytes_ += out.bytes;
  return out;
}

void BatchReader::collect(metrics::ReadPhase& phase) {
  phase.io.merge(io_);
  phase.sample_ns.merge(sample_ns_);
  phase.samples += samples_;
  phase.sample_bytes += bytes_;
  io_.clear();
  sample_ns_ = metrics::Histogram();
  samples_ = bytes_ = 0;
}

// ---------------------------------------------------------------- PytorchLoader

PytorchLoader::PytorchLoader(const config::Workload& w, const plan::DatasetLayout& layout) {
  const auto workers = static_cast<std::size_t>(w.reader.read_threads);
  const std::size_t readers = workers == 0 ? 1 : workers;
  for (std::size_t i = 0; i < readers; ++i) readers_.push_back(std::make_unique<BatchReader>(w, layout));
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
      result = readers_[id]->read(work, batch);
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
  if (threads_.empty()) return readers_[0]->read(work_, consumed_++);
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

std::unique_ptr<Loader> make_loader(const config::Workload& w, const plan::DatasetLayout& layout) {
  switch (w.reader.data_loader) {
    case config::DataLoader::pytorch:
      return std::make_unique<PytorchLoader>(w, layout);
    default:
      throw config_error(fmt::format("reader.data_loader '{}' is not built into trainio yet",
                                     config::to_string(w.reader.data_loader)),
                         "use reader.data_loader=pytorch (with framework: pytorch) for now");
  }
}

}  // namespace trainio::engine
