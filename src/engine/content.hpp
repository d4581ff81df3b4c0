#pragma once
// File content for generation: seeded random bytes, the same for a file whichever rank writes it.

#include "format/format.hpp"
#include "util/rng.hpp"

namespace trainio::engine {

class RandomContent final : public format::ContentSource {
 public:
  explicit RandomContent(std::uint64_t seed) : rng_(seed) {}
  void fill(void* data, std::size_t size) override { rng_.fill(data, size); }

 private:
  util::Rng rng_;
};

}  // namespace trainio::engine
