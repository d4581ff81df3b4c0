#pragma once
// A native loader's reader (reader.access: sample, as DALI's or a C++ loader's): exactly the
// bytes of the sample, in one read, through the chosen engine:
//  - posix: open, pread, close (files kept open with read_type: memory); O_DIRECT with
//    reader.odirect, reading the aligned range around the sample into an aligned buffer;
//  - mmap: the file mapped once, the sample's pages touched;
//  - io_uring: a whole batch's reads in flight at once, up to reader.io_depth.
// With reader.odirect and access: framework it reads whole files, as DLIO's O_DIRECT readers do.

#include <memory>
#include <string>
#include <vector>

#include "format/extents.hpp"
#include "format/file_cache.hpp"
#include "format/format.hpp"
#include "storage/aligned_buffer.hpp"
#include "storage/file.hpp"
#include "storage/mapped_file.hpp"
#include "storage/uring.hpp"

namespace trainio::format {

class NativeReader final : public SampleReader {
 public:
  NativeReader(const config::Workload& w, std::unique_ptr<ExtentFinder> extents);
  std::uint64_t read(const SampleRequest& r) override;
  std::uint64_t read_batch(std::span<const SampleRequest> batch) override;
  bool reads_batches() const override { return uring_ != nullptr; }

 private:
  struct Range {  // what is read for an extent: aligned for O_DIRECT
    std::uint64_t offset = 0;
    std::size_t length = 0;
    std::size_t skip = 0;  // where the extent starts inside the range
  };
  Range range_of(const Extent& e) const;
  storage::File& open_file(const SampleRequest& r);
  void done_with();
  Extent extent_of(storage::File& f, const SampleRequest& r);
  void check_complete(const std::string& path, const Extent& e, const Range& r, std::size_t got) const;

  std::unique_ptr<ExtentFinder> extents_;
  config::IoEngine engine_;
  bool direct_;
  bool keep_open_;
  std::size_t alignment_ = 1;  // O_DIRECT offset and buffer alignment, learned on the first file
  storage::AlignedBuffer buffer_;
  std::unique_ptr<storage::Uring> uring_;
  // Open files (read_type: memory) or maps (mmap), least recently used dropped first: a batch
  // of at most kMaxOpen files never closes a file it is still reading.
  static constexpr std::size_t kMaxOpen = 256;
  FileCache<storage::File> files_{kMaxOpen};
  FileCache<storage::MappedFile> maps_{kMaxOpen};
  storage::File current_;
  std::vector<storage::File> batch_files_;     // opened for this batch only
  std::vector<storage::File*> batch_open_;     // each request's file
  std::vector<storage::AsyncRead> batch_reads_;
  std::vector<Range> batch_ranges_;
  std::vector<Extent> batch_extents_;
};

}  // namespace trainio::format
