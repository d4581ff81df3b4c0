#pragma once
// File content for generation, the same for a file whichever rank writes it.
//  - random: seeded random bytes, incompressible (the default, as DLIO's). Made at memory speed:
//    each 4 KiB block is a block of a 256 KiB random pool (the same in every process; small enough
//    to stay in cache while the kernel copies the bytes written before), chosen and
//    XOR-ed with 64-bit words derived from the file's seed and the block's index. Blocks are
//    unique across files, and nothing a compressor or deduplicator can use. The zip CRC-32 of a
//    whole block follows from the CRC-32 of its pool block and its key (the CRC is linear), so
//    NPZ generation does not read its data back to checksum it.
//  - compressible: in every 4 KiB block, the first 4096/ratio bytes are random and the rest zero,
//    so inline compression (lz4, zstd, gzip) shrinks the data by about `ratio`, while every block
//    stays unique, so deduplication finds nothing to share.

#include <memory>

#include "config/workload.hpp"
#include "format/format.hpp"
#include "plan/layout.hpp"
#include "util/rng.hpp"

namespace trainio::engine {

class RandomContent final : public format::ContentSource {
 public:
  static constexpr std::size_t kBlock = 4096;
  explicit RandomContent(std::uint64_t seed) : seed_(seed) {}
  void fill(void* data, std::size_t size) override;
  void fill_crc32(void* data, std::size_t size, std::uint32_t& crc) override;
  void seek(std::uint64_t offset) override {
    block_ = offset / kBlock;
    position_ = offset % kBlock;
  }

 private:
  // The block being produced: which pool block, and the 64-bit word it is XOR-ed with.
  struct Block {
    std::uint64_t pool_index;
    std::uint64_t key;
  };
  Block block() const;
  std::uint64_t seed_;
  std::uint64_t block_ = 0;     // index of the block being produced
  std::size_t position_ = 0;    // offset within it, across fill() calls
};

class CompressibleContent final : public format::ContentSource {
 public:
  static constexpr std::size_t kBlock = 4096;
  CompressibleContent(std::uint64_t seed, double ratio);
  void fill(void* data, std::size_t size) override;
  void seek(std::uint64_t offset) override { offset_ = offset; }

 private:
  RandomContent random_;          // where the random part of each block comes from
  std::size_t random_per_block_;
  std::uint64_t offset_ = 0;      // position in the file's content
};

std::unique_ptr<format::ContentSource> make_content(const config::Workload& w, std::uint64_t seed);
// The content of a data file of the dataset: the same bytes whichever rank writes it, and wherever.
std::unique_ptr<format::ContentSource> file_content(const config::Workload& w, const plan::DataFile& file);

}  // namespace trainio::engine
