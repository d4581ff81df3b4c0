#pragma once
// NPY: one array per file holding the file's samples, shape (sample dims..., samples) as DLIO
// writes it, byte-compatible with numpy.save. The reader re-enacts np.load(path): Python's
// buffered reader for the header, then numpy.fromfile through a dup'ed descriptor and C stdio.

#include <vector>

#include "format/format.hpp"
#include "format/per_file_shape.hpp"
#include "format/python_io.hpp"
#include "format/stdio_io.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

class NpyWriter final : public ByteWriter {
 public:
  std::optional<std::uint64_t> expected_size(const plan::DataFile& file) const override;
  bool writes_in_one_call(const plan::DataFile& file) const override { return fits_stream_buffer(file); }

 protected:
  void write_bytes(const plan::DataFile& file, storage::Output& out, ContentSource& content) override;

 private:
  // The header of files of the last sample shape and count (formatted once, not per file).
  const std::string& header_of(const plan::DataFile& file) const;
  mutable PerFileShape<std::string> header_;
};

class NpyReader final : public SampleReader {
 public:
  explicit NpyReader(std::size_t python_buffer_size = 0);
  std::uint64_t read(const SampleRequest& r) override;

 private:
  PyBufferedFile file_;
  StdioFile stream_;  // numpy.fromfile's FILE, made afresh per sample in the memory of the last
  util::Bytes data_;  // reused destination for fread (numpy's fresh array)
  std::string header_;
};

std::optional<std::string> validate_npy(const plan::DataFile& expected);

// The NPY header of a DLIO data file: shape (sample dims..., samples).
std::string data_file_header(const plan::DataFile& f);

}  // namespace trainio::format
