#pragma once
// libhdf5's storage calls for a new HDF5 file, replayed without libhdf5 for the next files of the
// same layout: libhdf5 spends more CPU per file (metadata cache, object headers) than it takes
// the kernel to write a file of a few MiB, so generation would measure libhdf5 rather than the
// storage.
//
// libhdf5 writes one file with the trainio driver recording (the probe open that finds no file,
// the create and its fstat, flock, every write with the bytes of the metadata ones, ftruncate,
// close). For contiguous datasets without filters, what libhdf5 writes depends only on the
// layout (shapes, types, dataset count) and on the times in its object headers, which are whole
// seconds: two files of one layout written in the same second are byte for byte alike outside
// the raw data, which is at fixed addresses (the datasets' offsets). So, within the second the
// recorded file was written in, a file of the same layout is made by issuing the same calls:
// metadata writes with the recorded bytes, raw-data writes with the file's own content at the
// same offsets and sizes, and H5Fcreate naming the file outside the driver (getcwd for a
// relative path, then lstat: storage::name_file_as_hdf5) before the first write. The result is
// the file libhdf5 would have written in that second; where writing one file crosses into the
// next second, libhdf5 would have stamped the objects it created after the tick with the later
// second, the replay stamps them all with the first.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format/format.hpp"
#include "format/hdf5/hdf5_calls.hpp"
#include "storage/hdf5_vfd.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

// Where raw data lies in a written file: a contiguous dataset's bytes, either the file's content
// from `content_offset` on, or zeros (labels).
struct Hdf5RawExtent {
  std::uint64_t offset = 0, bytes = 0;
  bool zeros = false;
  std::uint64_t content_offset = 0;
};

class Hdf5WriteTemplate {
 public:
  using Step = Hdf5Step;  // probe, create, lock, unlock, path_stat, read, metadata, data, zeros, truncate, close

  // The template of a recording of libhdf5 creating and writing one file whose raw data lies in
  // `raw`; nullopt when a call does not fit (a raw-data write outside the extents, a second file).
  static std::optional<Hdf5WriteTemplate> learn(const storage::DriverRecording& r, std::span<const Hdf5RawExtent> raw);

  // Makes a new file at `path` with the recorded calls, raw data from `content`. `buffer` holds
  // the largest raw-data write (it is resized when smaller); `scratch` receives read-backs.
  void write(const std::string& path, ContentSource& content, util::Bytes& buffer,
             std::vector<unsigned char>& scratch) const;

  const std::vector<Step>& steps() const { return steps_; }

 private:
  std::vector<Step> steps_;
  std::vector<unsigned char> metadata_;
  std::uint64_t largest_raw_ = 0;
};

}  // namespace trainio::format
