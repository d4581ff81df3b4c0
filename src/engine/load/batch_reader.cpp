#include "engine/load/batch_reader.hpp"

#include <fmt/format.h>

#include "storage/fs.hpp"
#include "storage/io_observer.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace trainio::engine {

BatchReader::BatchReader(const plan::DatasetLayout& layout, std::unique_ptr<format::SampleReader> reader, CacheTier* tier)
    : layout_(layout), reader_(std::move(reader)), tier_(tier ? std::make_unique<TierReader>(*tier) : nullptr) {
  path_.reserve(layout.root().size() + 256);
}

Batch BatchReader::read(const PhaseWork& work, std::uint64_t step, std::uint64_t first, std::uint64_t end) {
  try {
    return read_samples(work, step, first, end);
  } catch (Error& e) {
    // Something other than a file in a sample's place (a FIFO reads as empty): say what it is.
    if (reader_->reads_batches())
      for (const auto& path : paths_) storage::refuse_irregular_file(path);
    else
      storage::refuse_irregular_file(path_);
    // A storage call that failed on a dataset file (unreadable, a folder in its place) says what
    // failed; what to do about it is the same for every reader.
    e.with_hint("check that the dataset's files are readable ('trainio validate' names every damaged file), or "
                "regenerate the dataset with 'trainio generate'");
    throw;
  }
}

Batch BatchReader::read_samples(const PhaseWork& work, std::uint64_t step, std::uint64_t first, std::uint64_t end) {
  storage::ScopedObserver observe(&io_);
  Batch out;
  const std::uint64_t size = work.plan->batch_size();
  end = std::min(end, size);
  // Preprocess time is drawn per sample of the phase, whoever reads it.
  auto preprocess = [&](std::int64_t from, std::uint64_t slot) {
    return from + static_cast<std::int64_t>(work.preprocess.at(step * size + slot) * 1e9);
  };
  if (reader_->reads_batches()) {
    // The reader overlaps the reads: hand it all of them; each sample's latency is then the batch's.
    paths_.resize(end - first);
    requests_.resize(end - first);
    for (std::uint64_t slot = first; slot < end; ++slot) {
      const plan::SampleRef ref = work.sample(step, slot, file_order_);
      std::string& path = paths_[slot - first];
      layout_.path_into(work.split, ref.file, path);
      requests_[slot - first] = {&path, layout_.sample_shape(work.split, ref.file), layout_.samples_per_file(), ref.sample,
                                 layout_.file_key(work.split, ref.file)};
    }
    const std::int64_t t0 = util::now_ns();
    out.bytes = tier_ ? read_batch_through_tier(requests_) : reader_->read_batch(requests_);
    const std::int64_t t1 = util::now_ns();
    for (std::uint64_t slot = first; slot < end; ++slot) sample_ns_.record(static_cast<std::uint64_t>(t1 - t0));
    out.samples = end - first;
    if (!work.preprocess.is_zero()) {
      std::int64_t at = t1;
      for (std::uint64_t slot = first; slot < end; ++slot) at = preprocess(at, slot);
      util::sleep_until_ns(at);
    }
  } else {
    // A sample's time runs from the end of the one before (the first: from here), so that its
    // plan lookup and request count in it, as in a framework's __getitem__, and one clock
    // reading per sample serves as the end of one and the start of the next. Samples the reader
    // serves from what it holds (a Parquet row group read already) take no clock reading, which
    // would cost more than serving them: a run of them shares its measured time evenly. Such
    // samples are looked up and served a run at a time (plan::SampleRun), not one by one.
    const bool from_memory_allowed = !tier_ && work.preprocess.is_zero();
    std::uint64_t from_memory = 0;  // samples served since t0 without a storage call
    std::int64_t t0 = util::now_ns();
    for (std::uint64_t slot = first; slot < end; ++slot) {
      const format::SampleRequest* next = nullptr;
      if (from_memory_allowed) {
        const plan::SampleRun run = work.run(step, slot, end, file_order_);
        next = &request_for(work.split, run.first);
        std::uint64_t bytes = 0;
        if (const std::uint64_t served = reader_->read_run_from_memory(*next, run.stride, run.count, bytes)) {
          out.bytes += bytes;
          out.samples += served;
          from_memory += served;
          slot += served - 1;
          continue;
        }
      } else {
        next = &request_for(work.split, work.sample(step, slot, file_order_));
      }
      const format::SampleRequest& request = *next;
      if (from_memory > 0) {
        const std::int64_t t = util::now_ns();
        sample_ns_.record_even(static_cast<std::uint64_t>(t - t0), from_memory);
        from_memory = 0;
        t0 = t;
      }
      out.bytes += tier_ ? read_through_tier(request) : reader_->read(request);
      const std::int64_t t1 = util::now_ns();
      sample_ns_.record(static_cast<std::uint64_t>(t1 - t0));
      ++out.samples;
      t0 = t1;
      if (!work.preprocess.is_zero()) {
        util::sleep_until_ns(preprocess(t1, slot));
        t0 = util::now_ns();  // the emulated preprocessing is not the next sample's reading
      }
    }
    if (from_memory > 0) sample_ns_.record_even(static_cast<std::uint64_t>(util::now_ns() - t0), from_memory);
  }
  return out;
}

const format::SampleRequest& BatchReader::request_for(plan::Split split, const plan::SampleRef& ref) {
  if (ref.file != request_file_ || split != request_split_) {
    layout_.path_into(split, ref.file, path_);
    request_ = {&path_, layout_.sample_shape(split, ref.file), layout_.samples_per_file(), 0,
                layout_.file_key(split, ref.file)};
    request_file_ = ref.file;
    request_split_ = split;
  }
  request_.sample = ref.sample;
  return request_;
}

std::uint64_t BatchReader::read_through_tier(const format::SampleRequest& request) {
  const TierReader::Route route = tier_->route(request);
  std::uint64_t bytes = route.bytes;
  if (route.source == TierReader::Route::Source::copy) {
    const storage::ScopedObserver observe(&tier_->tier_io());
    format::SampleRequest local = request;
    local.path = &tier_->copy_path();
    try {
      bytes = reader_->read(local);
    } catch (const Error& e) {  // the copy holds what the dataset's file held: name that file too
      throw Error(e.kind(), fmt::format("{} (the cache tier's copy of {})", e.what(), *request.path), e.hint());
    }
  } else if (route.source == TierReader::Route::Source::backing) {
    const storage::ScopedObserver observe(&tier_->backing_io());
    bytes = reader_->read(request);
  }
  tier_->count(route, bytes);
  return bytes;
}

std::uint64_t BatchReader::read_batch_through_tier(std::span<format::SampleRequest> batch) {
  struct Unpin {  // the batch's files stay pinned until it is read, or fails
    std::vector<TierReader::Route>& routes;
    ~Unpin() { routes.clear(); }
  } unpin{routes_};
  copies_.clear();
  past_.clear();
  copy_paths_.resize(batch.size());
  std::uint64_t bytes = 0, copy_bytes = 0, past_bytes = 0;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    routes_.push_back(tier_->route(batch[i]));
    const TierReader::Route& route = routes_.back();
    if (route.source == TierReader::Route::Source::memory) {
      bytes += route.bytes;
      tier_->count(route, route.bytes);
    } else if (route.source == TierReader::Route::Source::copy) {
      copy_paths_[i] = tier_->copy_path();
      copies_.push_back(batch[i]);
      copies_.back().path = &copy_paths_[i];
    } else {
      past_.push_back(batch[i]);
    }
  }
  if (!copies_.empty()) {
    const storage::ScopedObserver observe(&tier_->tier_io());
    try {
      copy_bytes = reader_->read_batch(copies_);
    } catch (const Error& e) {
      throw Error(e.kind(), fmt::format("{} (a cache tier's copy of a dataset file: {})", e.what(), tier_->tier().folder()),
                  e.hint());
    }
  }
  if (!past_.empty()) {
    const storage::ScopedObserver observe(&tier_->backing_io());
    past_bytes = reader_->read_batch(past_);
  }
  // The batch's reads overlap: each sample counts its own bytes.
  for (std::size_t i = 0; i < routes_.size(); ++i)
    if (routes_[i].source != TierReader::Route::Source::memory) tier_->count(routes_[i], batch[i].shape.bytes());
  return bytes + copy_bytes + past_bytes;
}

void BatchReader::collect(metrics::ReadPhase& phase) {
  if (tier_) tier_->collect(phase.tier, phase.io);
  phase.io.merge(io_);
  phase.sample_ns.merge(sample_ns_);
  io_.clear();
  sample_ns_ = metrics::Histogram();
}

}  // namespace trainio::engine
