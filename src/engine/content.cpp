#include "engine/content.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "format/archive/zip.hpp"

namespace trainio::engine {

namespace {

constexpr std::size_t kBlock = RandomContent::kBlock;
constexpr std::size_t kPoolBytes = 256u << 10;
constexpr std::uint64_t kPoolBlocks = kPoolBytes / kBlock;

const unsigned char* random_pool() {
  // Not zeroed first: every byte is written by the generator.
  static const std::unique_ptr<unsigned char[]> pool = [] {
    auto p = std::make_unique_for_overwrite<unsigned char[]>(kPoolBytes);
    util::Rng(0x706f6f6c).fill(p.get(), kPoolBytes);  // "pool": the same in every process
    return p;
  }();
  return pool.get();
}

// out = src XOR the 64-bit key repeated: byte i of the block is XOR-ed with byte i % 8 of the key.
void xor_block(unsigned char* out, const unsigned char* src, std::uint64_t key) {
  for (std::size_t i = 0; i < kBlock; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, src + i, 8);
    w ^= key;
    std::memcpy(out + i, &w, 8);
  }
}

// The zip CRC-32 of whole blocks without reading them. A CRC is affine over bytes of a given
// length: crc(a ^ b) = crc(a) ^ crc(b) ^ crc(zeros). So crc(pool block ^ key) is the pool block's
// CRC (computed once) XOR the key's part, which is linear in the key's bits: one table per key
// byte, 8 x 256 entries made from 64 basis blocks. Appending a block's CRC to a running CRC is
// zlib's crc32_combine_op with the operator for 4 KiB.
class BlockCrcs {
 public:
  BlockCrcs() : pool_(kPoolBlocks), append_op_(crc32_combine_gen(kBlock)) {
    const unsigned char* pool = random_pool();
    for (std::uint64_t j = 0; j < kPoolBlocks; ++j) pool_[j] = format::zip::crc32(0, pool + j * kBlock, kBlock);
    const std::vector<unsigned char> zeros(kBlock, 0);
    std::vector<unsigned char> block(kBlock);
    const std::uint32_t zeros_crc = format::zip::crc32(0, zeros.data(), kBlock);
    for (int byte = 0; byte < 8; ++byte) {
      std::array<std::uint32_t, 8> bit{};  // the key's part for one set bit of this key byte
      for (int b = 0; b < 8; ++b) {
        xor_block(block.data(), zeros.data(), std::uint64_t{1} << (8 * byte + b));
        bit[static_cast<std::size_t>(b)] = format::zip::crc32(0, block.data(), kBlock) ^ zeros_crc;
      }
      for (unsigned v = 0; v < 256; ++v) {
        std::uint32_t part = 0;
        for (int b = 0; b < 8; ++b)
          if (v >> b & 1) part ^= bit[static_cast<std::size_t>(b)];
        key_[static_cast<std::size_t>(byte)][v] = part;
      }
    }
  }

  // `crc` (of the bytes so far) extended by the block `pool_index` XOR `key`.
  std::uint32_t append(std::uint32_t crc, std::uint64_t pool_index, std::uint64_t key) const {
    std::uint32_t block = pool_[pool_index];
    for (std::size_t byte = 0; byte < 8; ++byte) block ^= key_[byte][key >> (8 * byte) & 0xff];
    return static_cast<std::uint32_t>(crc32_combine_op(crc, block, append_op_));
  }

 private:
  std::vector<std::uint32_t> pool_;                    // CRC of each pool block
  std::array<std::array<std::uint32_t, 256>, 8> key_;  // a key byte's part, by position and value
  uLong append_op_;
};

const BlockCrcs& block_crcs() {
  static const BlockCrcs crcs;  // built on the first whole block summed (NPZ of 4 KiB or more)
  return crcs;
}

}  // namespace

RandomContent::Block RandomContent::block() const {
  const std::uint64_t h = util::mix64(seed_ ^ util::mix64(block_));
  return {h % kPoolBlocks, util::mix64(h)};
}

void RandomContent::fill(void* data, std::size_t size) {
  const unsigned char* pool = random_pool();
  auto* out = static_cast<unsigned char*>(data);
  while (size > 0) {
    const Block b = block();
    const unsigned char* src = pool + b.pool_index * kBlock;
    const std::size_t n = std::min(size, kBlock - position_);
    if (position_ == 0 && n == kBlock) {
      xor_block(out, src, b.key);  // the common case: a whole block, 8 bytes at a time
    } else {
      // Part of a block: bytes up to the next 8-byte boundary of the block, then whole words.
      auto byte_at = [&](std::size_t at) {
        return static_cast<unsigned char>(src[at] ^ static_cast<unsigned char>(b.key >> (8 * (at % 8))));
      };
      std::size_t i = 0;
      for (; i < n && (position_ + i) % 8 != 0; ++i) out[i] = byte_at(position_ + i);
      for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, src + position_ + i, 8);
        w ^= b.key;
        std::memcpy(out + i, &w, 8);
      }
      for (; i < n; ++i) out[i] = byte_at(position_ + i);
    }
    out += n;
    size -= n;
    position_ += n;
    if (position_ == kBlock) {
      position_ = 0;
      ++block_;
    }
  }
}

void RandomContent::fill_crc32(void* data, std::size_t size, std::uint32_t& crc) {
  auto* out = static_cast<unsigned char*>(data);
  // Part of a block, before the first block boundary or after the last: summed by reading it.
  auto part = [&](std::size_t n) {
    fill(out, n);
    crc = format::zip::crc32(crc, out, n);
    out += n;
    size -= n;
  };
  if (position_ != 0) part(std::min(size, kBlock - position_));
  if (size >= kBlock) {
    const unsigned char* pool = random_pool();
    const BlockCrcs& crcs = block_crcs();
    for (; size >= kBlock; out += kBlock, size -= kBlock, ++block_) {
      const Block b = block();
      xor_block(out, pool + b.pool_index * kBlock, b.key);
      crc = crcs.append(crc, b.pool_index, b.key);
    }
  }
  if (size > 0) part(size);
}

CompressibleContent::CompressibleContent(std::uint64_t seed, double ratio)
    : random_(seed),
      random_per_block_(std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(kBlock / std::max(1.0, ratio))), 1, kBlock)) {}

void CompressibleContent::fill(void* data, std::size_t size) {
  auto* out = static_cast<unsigned char*>(data);
  while (size > 0) {
    const std::size_t in_block = offset_ % kBlock;
    const std::size_t n = std::min(size, kBlock - in_block);
    const std::size_t random = in_block < random_per_block_ ? std::min(n, random_per_block_ - in_block) : 0;
    if (random > 0) {
      random_.seek(offset_);
      random_.fill(out, random);
    }
    std::memset(out + random, 0, n - random);
    out += n;
    size -= n;
    offset_ += n;
  }
}

std::unique_ptr<format::ContentSource> make_content(const config::Workload& w, std::uint64_t seed) {
  if (w.dataset.data_content == config::DataContent::compressible)
    return std::make_unique<CompressibleContent>(seed, w.dataset.compression_ratio);
  return std::make_unique<RandomContent>(seed);
}

std::unique_ptr<format::ContentSource> file_content(const config::Workload& w, const plan::DataFile& file) {
  constexpr std::uint64_t kContentSeed = 0x747261696e696f21ULL;  // "trainio!"
  return make_content(w, util::derive_seed(kContentSeed, static_cast<std::uint64_t>(file.split), file.index));
}

}  // namespace trainio::engine
