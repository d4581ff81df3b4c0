#pragma once
// Which rank generates which file. With equal file sizes, file k goes to rank k % ranks (as
// DLIO). When sizes vary (record_length_bytes_stdev), files are dealt by bytes instead: largest
// first, each to the rank with the fewest bytes so far (LPT), so no rank writes far longer than
// the others. Pure and identical on every rank.

#include <cstdint>
#include <vector>

#include "plan/layout.hpp"

namespace trainio::plan {

// Dealing by bytes sorts every file's size on every rank (16 bytes a file, for a moment) and
// keeps the rank's own files (8 bytes each). Above this many files sizes vary too little from
// rank to rank to be worth it (a rank's sum of n random sizes varies as 1/sqrt(n)), so larger
// datasets are dealt round robin like equal files: a rank's memory stays flat at any file count.
constexpr std::uint64_t kMaxFilesDealtByBytes = std::uint64_t{1} << 20;

// The global file indices (see DatasetLayout::file_by_global_index) that one rank generates,
// ascending; round robin ones computed one by one, not listed.
class FileShare {
 public:
  FileShare() = default;  // no files
  FileShare(const DatasetLayout& layout, int rank, int ranks);
  std::uint64_t size() const { return dealt_by_bytes_ ? dealt_.size() : count_; }
  std::uint64_t operator[](std::uint64_t i) const { return dealt_by_bytes_ ? dealt_[i] : first_ + i * stride_; }

 private:
  bool dealt_by_bytes_ = false;
  std::vector<std::uint64_t> dealt_;
  std::uint64_t first_ = 0, stride_ = 1, count_ = 0;  // round robin
};

}  // namespace trainio::plan
