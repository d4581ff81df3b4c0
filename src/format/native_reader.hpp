#pragma once
// A native loader's reader (reader.access: sample, as DALI's or a C++ loader's): exactly the
// bytes of the sample, in one read, through the chosen storage engine (storage/read_engine.hpp):
//  - posix: open, pread, close (files kept open with read_type: memory); O_DIRECT with
//    reader.odirect, reading the aligned range around the sample into an aligned buffer;
//  - mmap: the file mapped once, the sample's pages touched;
//  - io_uring: a whole batch's reads in flight at once, up to reader.io_depth.
// With reader.odirect and access: framework it reads whole files, as DLIO's O_DIRECT readers do.

#include <memory>
#include <vector>

#include "format/extents.hpp"
#include "format/format.hpp"
#include "storage/read_engine.hpp"

namespace trainio::format {

class NativeReader final : public SampleReader, private storage::Locator {
 public:
  NativeReader(const storage::EngineOptions& engine, std::unique_ptr<ExtentFinder> extents);
  std::uint64_t read(const SampleRequest& r) override { return read_batch({&r, 1}); }
  std::uint64_t read_batch(std::span<const SampleRequest> batch) override;
  bool reads_batches() const override { return engine_->overlaps_reads(); }

 private:
  bool needs_file_size() const override { return extents_->needs_file_size(); }
  void locate(std::size_t i, std::uint64_t file_size) override;

  std::unique_ptr<ExtentFinder> extents_;
  std::unique_ptr<storage::ReadEngine> engine_;
  std::span<const SampleRequest> batch_;  // what read_batch() is reading
  std::vector<storage::SampleRead> reads_;
};

}  // namespace trainio::format
