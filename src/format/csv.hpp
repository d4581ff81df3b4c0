#pragma once
// CSV as DLIO writes it (pandas.DataFrame.to_csv): a header row ",0,1,...,n-1", then one row per
// sample: its index, then the sample's values (integers 0..254), comma-separated, '\n'-ended.

#include <vector>

#include "format/format.hpp"

namespace trainio::format {

class CsvWriter final : public ByteWriter {
 public:
  // Row lengths depend on the digits of the values: known only after writing.
  std::optional<std::uint64_t> expected_size(const plan::DataFile&) const override { return std::nullopt; }

 protected:
  void write_bytes(const plan::DataFile& file, storage::File& out, ContentSource& content) override;

 private:
  std::vector<char> buffer_;
  std::vector<unsigned char> values_;
};

std::optional<std::string> validate_csv(const plan::DataFile& expected);

}  // namespace trainio::format
