#pragma once
// indexed_binary (Megatron-style): a data file of samples back to back, plus two index files of
// little-endian uint64, one entry per sample: <file>.off.idx (byte offsets) and <file>.sz.idx
// (sizes). mmap_indexed_binary is the same files, read through a memory map.

#include <vector>

#include "format/format.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

namespace indexed_binary {
inline std::string offsets_path(const std::string& data_path) { return data_path + ".off.idx"; }
inline std::string sizes_path(const std::string& data_path) { return data_path + ".sz.idx"; }
}  // namespace indexed_binary

class IndexedBinaryWriter final : public ByteWriter {
 public:
  std::optional<std::uint64_t> expected_size(const plan::DataFile& f) const override { return f.data_bytes(); }
  std::vector<std::string> companions(const plan::DataFile& f) const override {
    return {indexed_binary::offsets_path(f.path), indexed_binary::sizes_path(f.path)};
  }
  bool writes_shared() const override { return true; }
  std::uint64_t write_shared(const plan::DataFile& file, const std::string& path, SharedWriting& job,
                             ContentSource& content) override;

 protected:
  void write_bytes(const plan::DataFile& file, storage::Output& out, ContentSource& content) override;

 private:
  void write_indexes(const plan::DataFile& file);
  util::Bytes index_buffer_;  // kept from file to file: made afresh, its 1 MiB cost more than small files
};

std::optional<std::string> validate_indexed_binary(const plan::DataFile& expected);

}  // namespace trainio::format
