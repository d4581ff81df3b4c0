#include "engine/load/tensorflow_loader.hpp"

#include <fmt/format.h>

#include "engine/load/shuffle_buffer.hpp"
#include "format/tfrecord/tfrecord_stream.hpp"
#include "metrics/trace.hpp"
#include "storage/fs.hpp"
#include "storage/io_observer.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace trainio::engine {

namespace {
constexpr std::size_t kChunkRecords = 128;
}  // namespace

TensorflowLoader::TensorflowLoader(const config::Workload& w, const plan::DatasetLayout& layout,
                                   std::int64_t polling_budget_ns)
    : w_(w),
      layout_(layout),
      cycle_(static_cast<std::size_t>(std::max<std::int64_t>(1, w.reader.read_threads))),
      map_threads_(static_cast<std::size_t>(std::max<std::int64_t>(1, w.reader.computation_threads))),
      buffer_bytes_(static_cast<std::size_t>(w.reader.transfer_size)),
      wait_(polling_budget_ns) {}

TensorflowLoader::~TensorflowLoader() { finish(); }

void TensorflowLoader::start(const PhaseWork& work) {
  finish();
  work_ = work;
  steps_ = work.plan->steps();
  consumed_ = 0;
  halt_ = false;
  error_ = nullptr;
  to_map_.clear();
  mapping_ = !work.preprocess.is_zero();
  window_ = static_cast<std::size_t>(std::max<std::int64_t>(1, w_.reader.prefetch_size)) + (mapping_ ? map_threads_ : 0);
  ready_.assign(window_, Ready{});

  // list_files: TensorFlow checks every name of the split with access() on every rank, every
  // epoch (millions of calls per epoch at scale). trainio leaves that out: the dataset marker
  // vouches for the files, and a missing one is an error when its stream opens it.
  streams_.emplace(layout_, work.split, w_, work.epoch, work.plan->rank(), work.plan->ranks(), work.run_seed);
  slots_.clear();
  slots_.resize(cycle_);
  for (Slot& s : slots_) {
    // Every record vector a slot's chunks circulate in, made now: the stream's, the ready
    // ring's and the one the pipeline drains (its first is empty and stays out of the circle).
    s.spare.resize(kChunksPerSlot + 2);
    for (auto& v : s.spare) v.reserve(kChunkRecords);
  }

  // Named as the trace shows them: a stream thread reads one of the interleaved files at a time.
  for (std::size_t s = 0; s < cycle_; ++s)
    threads_.emplace_back([this, s] {
      metrics::trace::name_thread(fmt::format("reader {}", s));
      stream_main(s);
    });
  threads_.emplace_back([this] {
    metrics::trace::name_thread("interleave");
    pipeline_main();
  });
  if (mapping_)
    for (std::size_t i = 0; i < map_threads_; ++i)
      threads_.emplace_back([this, i] {
        metrics::trace::name_thread(fmt::format("map {}", i));
        map_main();
      });
}

void TensorflowLoader::halt_locked() {
  halt_ = true;
  space_cv_.notify_all();
  data_cv_.notify_all();
  window_cv_.notify_all();
  map_cv_.notify_all();
  wait_.signal(ready_cv_);
}

void TensorflowLoader::fail(std::exception_ptr error) {
  std::lock_guard lock(mutex_);
  if (!error_) error_ = error;
  halt_locked();
}

bool TensorflowLoader::hand_over(std::size_t slot, Chunk& chunk) {
  std::unique_lock lock(mutex_);
  Slot& s = slots_[slot];
  space_cv_.wait(lock, [&] { return halt_ || s.ready_count < kChunksPerSlot; });
  if (halt_) return false;
  s.ready[(s.ready_first + s.ready_count++) % kChunksPerSlot] = std::move(chunk);
  chunk = Chunk{};
  if (!s.spare.empty()) {
    chunk.records = std::move(s.spare.back());
    s.spare.pop_back();
  }
  data_cv_.notify_one();
  lock.unlock();
  chunk.records.clear();
  return true;
}

void TensorflowLoader::stream_main(std::size_t slot) {
  Slot& s = slots_[slot];
  storage::ScopedObserver observe(&s.io);
  try {
    format::TfRecordStream in(buffer_bytes_);
    std::string path;
    Chunk chunk;
    {
      std::lock_guard lock(mutex_);
      chunk.records = std::move(s.spare.back());  // made by start()
      s.spare.pop_back();
    }
    // The slot streams every cycle_-th of the rank's files, from its own index on.
    for (std::uint64_t i = slot; i < streams_->size(); i += cycle_) {
      const std::uint64_t file = (*streams_)[i];
      layout_.path_into(work_.split, file, path);
      const std::uint64_t sample_bytes = layout_.sample_shape(work_.split, file).bytes();
      try {
        in.open(path, layout_.samples_per_file());
        std::uint64_t length = 0;
        while (true) {
          const std::int64_t t0 = util::now_ns();
          if (!in.next(length)) break;
          s.record_ns.record(static_cast<std::uint64_t>(util::now_ns() - t0));
          chunk.records.push_back(sample_bytes);
          if (chunk.records.size() == kChunkRecords && !hand_over(slot, chunk)) return;
        }
        in.close();
      } catch (const Error&) {
        storage::refuse_irregular_file(path);  // a FIFO in the file's place reads as empty: name it
        throw;
      }
    }
    chunk.last = true;
    hand_over(slot, chunk);
  } catch (...) {
    fail(std::current_exception());
  }
}

void TensorflowLoader::pipeline_main() {
  try {
    // Interleave: one record from each slot in turn; a slot that has streamed all its files
    // leaves the rotation.
    struct Pending {
      std::vector<std::uint64_t> records;  // the slot's chunk being drained
      std::size_t next = 0;
      bool last = false;   // the chunk is the slot's last
      bool ended = false;  // drained its last chunk: out of the rotation
      bool drained() const { return next == records.size(); }
    };
    std::vector<Pending> pending(cycle_);
    std::size_t active = cycle_, cursor = 0;
    auto interleaved = [&](std::uint64_t& record) {
      while (active > 0) {
        const std::size_t slot = cursor;
        cursor = (cursor + 1) % cycle_;
        Pending& p = pending[slot];
        if (p.ended) continue;
        if (p.drained() && !p.last) {
          std::unique_lock lock(mutex_);
          Slot& s = slots_[slot];
          data_cv_.wait(lock, [&] { return halt_ || s.ready_count > 0; });
          if (halt_) return false;
          Chunk& chunk = s.ready[s.ready_first];
          s.ready_first = (s.ready_first + 1) % kChunksPerSlot;
          --s.ready_count;
          if (p.records.capacity() > 0) s.spare.push_back(std::move(p.records));  // back to the slot's thread
          p.records = std::move(chunk.records);
          p.next = 0;
          p.last = chunk.last;
          space_cv_.notify_all();
        }
        if (p.drained()) {
          p.ended = true;
          --active;
          continue;
        }
        record = p.records[p.next++];
        return true;
      }
      return false;
    };

    const bool shuffle = w_.reader.sample_shuffle != config::Shuffle::off;
    ShuffleBuffer buffer(static_cast<std::size_t>(w_.reader.shuffle_size),
                         util::derive_seed(plan::epoch_seed(w_, work_.run_seed, work_.epoch), 7,
                                           work_.split == plan::Split::train ? 0 : 1));
    auto shuffled = [&](std::uint64_t& record) {
      if (!shuffle) return interleaved(record);
      std::uint64_t in = 0;
      while (!buffer.full() && interleaved(in)) buffer.push(in);
      if (buffer.empty()) return false;
      record = buffer.take();
      return true;
    };

    const auto rank = static_cast<std::uint64_t>(work_.plan->rank());
    const auto ranks = static_cast<std::uint64_t>(work_.plan->ranks());
    const std::uint64_t batch_size = work_.plan->batch_size();
    std::uint64_t position = 0, batch = 0;
    Batch current;
    std::uint64_t record = 0;
    while (batch < steps_ && shuffled(record)) {
      if (streams_->record_sharded() && position++ % ranks != rank) continue;
      ++current.samples;
      current.bytes += record;
      if (current.samples == batch_size) {
        if (!emit(batch++, current)) return;
        current = Batch{};
      }
    }
    std::lock_guard lock(mutex_);
    if (batch < steps_ && !halt_)
      throw internal_error(fmt::format("the TFRecord streams ended after {} of {} batches", batch, steps_));
  } catch (...) {
    fail(std::current_exception());
  }
}

bool TensorflowLoader::emit(std::uint64_t batch, const Batch& result) {
  std::unique_lock lock(mutex_);
  window_cv_.wait(lock, [&] { return halt_ || batch < consumed_ + window_; });
  if (halt_) return false;
  ready_[batch % window_] = Ready{batch, !mapping_, result};
  if (mapping_) {
    to_map_.push_back(batch);
    map_cv_.notify_one();
  } else {
    wait_.signal(ready_cv_);
  }
  return true;
}

void TensorflowLoader::map_main() {
  const std::uint64_t batch_size = work_.plan->batch_size();
  std::unique_lock lock(mutex_);
  while (true) {
    map_cv_.wait(lock, [&] { return halt_ || !to_map_.empty(); });
    if (halt_) return;
    const std::uint64_t batch = to_map_.front();
    to_map_.pop_front();
    lock.unlock();
    // The map function runs once per batch (DLIO maps after batching) and spends each record's
    // preprocess time.
    double seconds = 0;
    for (std::uint64_t i = 0; i < batch_size; ++i) seconds += work_.preprocess.at(batch * batch_size + i);
    util::sleep_until_ns(util::now_ns() + static_cast<std::int64_t>(seconds * 1e9));
    lock.lock();
    ready_[batch % window_].done = true;
    wait_.signal(ready_cv_);
  }
}

Batch TensorflowLoader::next() {
  std::unique_lock lock(mutex_);
  const std::uint64_t b = consumed_;
  if (b >= steps_) throw internal_error("the training loop asked for more batches than the epoch has");
  Ready& r = ready_[b % window_];
  wait_.wait(lock, ready_cv_, [&] { return error_ || (r.done && r.batch == b); });
  if (error_) std::rethrow_exception(error_);
  const Batch out = r.result;
  r = Ready{};
  ++consumed_;
  window_cv_.notify_one();
  return out;
}

void TensorflowLoader::finish() {
  {
    std::lock_guard lock(mutex_);
    halt_locked();
  }
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void TensorflowLoader::collect(metrics::ReadPhase& phase) {
  for (Slot& s : slots_) {
    phase.io.merge(s.io);
    phase.sample_ns.merge(s.record_ns);
    s.io.clear();
    s.record_ns = metrics::Histogram();
  }
  phase.cpu_polling += util::ns_to_s(wait_.take_polling_cpu_ns());
}

}  // namespace trainio::engine
