#include "engine/content.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace trainio::engine {

CompressibleContent::CompressibleContent(std::uint64_t seed, double ratio)
    : rng_(seed),
      random_per_block_(std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(kBlock / std::max(1.0, ratio))), 1, kBlock)) {}

void CompressibleContent::fill(void* data, std::size_t size) {
  auto* out = static_cast<unsigned char*>(data);
  while (size > 0) {
    const std::size_t in_block = std::min(size, kBlock - position_);
    // Random part of this block that falls in [position_, position_ + in_block).
    const std::size_t random_end = random_per_block_;
    std::size_t done = 0;
    if (position_ < random_end) {
      const std::size_t n = std::min(in_block, random_end - position_);
      rng_.fill(out, n);
      done = n;
    }
    std::memset(out + done, 0, in_block - done);
    out += in_block;
    size -= in_block;
    position_ = (position_ + in_block) % kBlock;
  }
}

std::unique_ptr<format::ContentSource> make_content(const config::Workload& w, std::uint64_t seed) {
  if (w.dataset.data_content == config::DataContent::compressible)
    return std::make_unique<CompressibleContent>(seed, w.dataset.compression_ratio);
  return std::make_unique<RandomContent>(seed);
}

}  // namespace trainio::engine
