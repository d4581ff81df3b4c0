#pragma once
// Reads the samples of a batch (or of part of one) for a loader thread. One per thread: it owns
// that thread's reader, buffers and recorders.

#include <memory>
#include <string>
#include <vector>

#include "engine/cache/cache_tier.hpp"
#include "engine/load/loader.hpp"
#include "format/format.hpp"
#include "metrics/histogram.hpp"
#include "metrics/io_recorder.hpp"

namespace trainio::engine {

class BatchReader {
 public:
  // `tier`: the node's cache tier, or null.
  BatchReader(const plan::DatasetLayout& layout, std::unique_ptr<format::SampleReader> reader, CacheTier* tier = nullptr);
  // Reads slots [first, end) of the plan's step `step`; the whole batch by default.
  Batch read(const PhaseWork& work, std::uint64_t step, std::uint64_t first = 0, std::uint64_t end = ~0ULL);
  void collect(metrics::ReadPhase& phase);
  // A phase starts (no read under way): the format's reader drops what it keeps per epoch.
  void begin_epoch() { reader_->begin_epoch(); }

 private:
  Batch read_samples(const PhaseWork& work, std::uint64_t step, std::uint64_t first, std::uint64_t end);
  // One sample through the cache tier: from its memory, its local copy, or past it.
  std::uint64_t read_through_tier(const format::SampleRequest& request);
  // A batch through the cache tier: memory hits served, the rest read as two batches (copies, backing).
  std::uint64_t read_batch_through_tier(std::span<format::SampleRequest> batch);
  const plan::DatasetLayout& layout_;
  std::unique_ptr<format::SampleReader> reader_;
  // Built anew only when a sample is in another file than the one before (samples in file order
  // come from one file for long runs): the path, shape and key of request_'s file.
  const format::SampleRequest& request_for(plan::Split split, const plan::SampleRef& ref);
  std::string path_;                    // reused: no allocation per sample
  format::SampleRequest request_;       // path_'s file; request_.sample is the last sample's
  plan::Split request_split_ = plan::Split::train;
  std::uint64_t request_file_ = ~0ULL;  // request_'s file in request_split_; none yet
  util::Permutation::Memo file_order_;  // the last file looked up in the plan's file order
  std::vector<std::string> paths_;      // for readers that take whole batches
  std::vector<format::SampleRequest> requests_;
  metrics::IoRecorder io_;
  std::unique_ptr<TierReader> tier_;
  std::vector<TierReader::Route> routes_;      // a batch's routes, reused
  std::vector<std::string> copy_paths_;        // a batch's local copies, reused
  std::vector<format::SampleRequest> copies_, past_;
  metrics::Histogram sample_ns_;
};

}  // namespace trainio::engine
