#pragma once
// CSV as DLIO's current generator writes it (pandas.DataFrame.to_csv with index=False,
// header=False): one row per sample, the sample's values (integers 0..254) comma-separated,
// '\n'-ended. The reader re-enacts pandas.read_csv: Python's text-mode file read in 256 KiB
// requests (one raw read each, through BufferedReader.read1) until it returns nothing.

#include <vector>

#include "format/format.hpp"
#include "format/python_io.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

class CsvWriter final : public ByteWriter {
 public:
  // Row lengths depend on the digits of the values: known only after writing.
  std::optional<std::uint64_t> expected_size(const plan::DataFile&) const override { return std::nullopt; }

 protected:
  void write_bytes(const plan::DataFile& file, storage::Output& out, ContentSource& content) override;

 private:
  std::vector<unsigned char> values_;
};

class CsvReader final : public SampleReader {
 public:
  std::uint64_t read(const SampleRequest& r) override;

 private:
  PyBufferedFile file_;
  util::Bytes chunk_;
};

std::optional<std::string> validate_csv(const plan::DataFile& expected);

}  // namespace trainio::format
