#pragma once
// A rank's part of a checkpoint load on another layout than the save's (plan/reshard.hpp): for
// each saved file it needs, in the order it first needs it, as torch.distributed.checkpoint's
// FileSystemReader goes through its read items grouped by file: open, learn the file's size, read
// where its records lie (the zip's central directory and end records: a DLIO-layout file has no
// separate .metadata), then for each piece the record's local header (once) and exactly the
// piece's bytes, with pread, in pieces of at most half the staging buffer; close.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "format/torch/torch_file.hpp"
#include "metrics/run_record.hpp"
#include "plan/reshard.hpp"
#include "util/page_aligned.hpp"

namespace trainio::engine {

class ReshardLoader {
 public:
  ReshardLoader(const plan::ReshardPlan& plan, int rank);
  // Reads this rank's pieces of the checkpoint in folder `dir`; fills the record's reshard part
  // and its files and byte counts. A file missing or not the archive the layout writes is a data
  // error naming it.
  // `before_scratch` is called before the first use of `scratch` (the indexes use a buffer of their own).
  void read(const std::string& dir, util::Bytes& scratch, metrics::CheckpointRecord& rec,
            const std::function<void()>& before_scratch) const;
  std::uint64_t largest_file() const { return largest_file_; }
  const plan::ReshardReads& reads() const { return reads_; }

 private:
  plan::ParallelLayout saved_, load_;
  plan::ReshardReads reads_;
  std::vector<format::torch::Archive> archives_;  // one per file of reads_
  std::uint64_t largest_file_ = 0;
};

}  // namespace trainio::engine
