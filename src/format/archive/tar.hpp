#pragma once
// Tar shards in the WebDataset layout: per sample a "<key>.bin" member (the sample's bytes) and a
// "<key>.cls" member (its label), POSIX ustar headers, the archive padded to 10240-byte records
// as Python's tarfile and GNU tar do. Packing many samples into one file is how training sites
// avoid a metadata storm of one open per sample.

#include <string_view>
#include <vector>

#include "format/format.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

namespace tar {
inline constexpr std::size_t kBlock = 512;
inline constexpr std::size_t kRecord = 20 * kBlock;
// The 512-byte ustar header of a regular file member.
std::string header(const std::string& name, std::uint64_t size);
// Member names of sample `i` of a shard.
std::string key(const plan::DataFile& f, std::uint64_t sample);
// Offset of sample i's .bin header in a shard of samples of `sample_bytes`.
std::uint64_t sample_offset(std::uint64_t sample, std::uint64_t sample_bytes);
// The size of a shard of `samples` samples of `sample_bytes`: its members, two zero blocks, and
// zeros up to a whole record.
std::uint64_t shard_size(std::uint64_t samples, std::uint64_t sample_bytes);
// What is wrong with the member header `h` (512 bytes) that should hold member `<stem>_<sample><ext>`
// of `size` bytes; nullptr when it is right. Allocation-free: it runs per sample.
const char* header_problem(const char* h, std::string_view stem, std::uint64_t sample, std::string_view ext,
                           std::uint64_t size);
// The shard name a member name starts with: the file name up to its first dot.
std::string_view stem_of(std::string_view path);
}  // namespace tar

class TarWriter final : public ByteWriter {
 public:
  std::optional<std::uint64_t> expected_size(const plan::DataFile& file) const override;

 protected:
  void write_bytes(const plan::DataFile& file, storage::Output& out, ContentSource& content) override;
};

// A reader with a shard index, as native WebDataset readers use: one read of a sample's header
// and data at its offset.
class TarSampleReader final : public SampleReader {
 public:
  std::uint64_t read(const SampleRequest& r) override;

 private:
  util::Bytes buffer_;
  storage::File file_;  // reopened per sample: its path's memory is reused
};

std::optional<std::string> validate_tar(const plan::DataFile& expected);

}  // namespace trainio::format
