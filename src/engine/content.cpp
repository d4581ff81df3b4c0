#include "engine/content.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace trainio::engine {

namespace {

constexpr std::size_t kPoolBytes = 4u << 20;
constexpr std::uint64_t kPoolBlocks = kPoolBytes / RandomContent::kBlock;

const unsigned char* random_pool() {
  static const std::vector<unsigned char> pool = [] {
    std::vector<unsigned char> p(kPoolBytes);
    util::Rng(0x706f6f6c).fill(p.data(), p.size());  // "pool": the same in every process
    return p;
  }();
  return pool.data();
}

}  // namespace

void RandomContent::fill(void* data, std::size_t size) {
  const unsigned char* pool = random_pool();
  auto* out = static_cast<unsigned char*>(data);
  while (size > 0) {
    const std::uint64_t h = util::mix64(seed_ ^ util::mix64(block_));
    const unsigned char* src = pool + (h % kPoolBlocks) * kBlock;
    const std::uint64_t key = util::mix64(h);
    const std::size_t n = std::min(size, kBlock - position_);
    if (position_ == 0 && n == kBlock) {
      // The common case: a whole block, 8 bytes at a time.
      for (std::size_t i = 0; i < kBlock; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, src + i, 8);
        w ^= key;
        std::memcpy(out + i, &w, 8);
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t at = position_ + i;
        out[i] = static_cast<unsigned char>(src[at] ^ static_cast<unsigned char>(key >> (8 * (at % 8))));
      }
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
