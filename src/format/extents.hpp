#pragma once
// Where a sample's bytes lie in its file, for readers that fetch exactly those bytes with one
// read (reader.access: sample, as a native C++ loader does), and for O_DIRECT reads.

#include <cstdint>
#include <memory>
#include <string>

#include "config/workload.hpp"
#include "format/format.hpp"
#include "plan/layout.hpp"

namespace trainio::format {

struct Extent {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

class ExtentFinder {
 public:
  virtual ~ExtentFinder() = default;
  // Whether find() needs the file's size (whole-file formats).
  virtual bool needs_file_size() const { return false; }
  // Where sample r.sample of file r.file lies; `file_size` only when needs_file_size().
  virtual Extent find(const SampleRequest& r, std::uint64_t file_size) = 0;
};

// The whole file is the unit of reading (csv, jpeg, png; and any format read as DLIO's O_DIRECT
// readers read it).
std::unique_ptr<ExtentFinder> whole_file_extents();

// Each format's sample extents; throws a config error where a sample has no single extent
// (e.g. chunked HDF5).
std::unique_ptr<ExtentFinder> sample_extents(const config::Workload& w);

}  // namespace trainio::format
