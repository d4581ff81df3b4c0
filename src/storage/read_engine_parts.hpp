#pragma once
// What the pread and io_uring read engines share: opening a read's file (kept between reads or
// not, with O_DIRECT or not), the aligned range an O_DIRECT read covers, and the check that the
// file held the whole read.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "storage/file.hpp"
#include "storage/read_engine.hpp"
#include "util/file_cache.hpp"

namespace trainio::storage {

// The bytes actually read for a sample: for O_DIRECT, the aligned range around it.
struct ByteRange {
  std::uint64_t offset = 0;
  std::size_t length = 0;
  std::size_t skip = 0;  // where the sample starts inside the range
};

class FileOpener {
 public:
  explicit FileOpener(const EngineOptions& options) : direct_(options.direct), keep_open_(options.keep_open) {}

  // The file of `r`: the kept handle when files are kept (and `may_keep`), else `fresh` reopened
  // on it (reusing the handle's memory), which the caller closes when done with it.
  File& open(const SampleRead& r, File& fresh, bool may_keep = true);
  bool keeps_open() const { return keep_open_; }
  // Whether the files of reads all in flight at once may be kept: when they are no more than
  // the kept files' bound, keeping one never closes another the batch is still reading.
  bool may_keep_all(std::span<const SampleRead> reads);
  ByteRange range_of(const SampleRead& r) const;
  // O_DIRECT's offset alignment (1 without O_DIRECT), learned on the first file.
  std::size_t alignment() const { return alignment_; }
  // Where a read's buffer starts: a page, as fio's (iomem=mmap) and a framework's, or what
  // O_DIRECT needs of memory where that is more. Aligned to the offsets only, a 4 KiB O_DIRECT
  // read spans two pages (two segments for the device), and a copy from the page cache into
  // unaligned memory is slow on some virtual machines.
  std::size_t buffer_alignment() const { return buffer_alignment_; }

 private:
  bool direct_, keep_open_;
  std::size_t alignment_ = 1;
  std::size_t buffer_alignment_ = 4096;
  util::FileCache<File> kept_{kMaxKeptFiles};
  std::vector<std::uint64_t> distinct_;  // may_keep_all's scratch, reused
};

// A dataset error when fewer than the sample's bytes were read (the file ends early).
void check_complete(const SampleRead& r, const ByteRange& range, std::size_t got);

std::unique_ptr<ReadEngine> make_pread_engine(const EngineOptions& options);
std::unique_ptr<ReadEngine> make_mmap_engine();
std::unique_ptr<ReadEngine> make_uring_engine(const EngineOptions& options);

}  // namespace trainio::storage
