#pragma once
// Seeded random bytes as a writer's content source, for format tests that write real files.

#include <cstddef>
#include <cstdint>

#include "format/format.hpp"
#include "util/rng.hpp"

namespace trainio::test {

class RandomContent : public format::ContentSource {
 public:
  explicit RandomContent(std::uint64_t seed) : rng_(seed) {}
  void fill(void* data, std::size_t size) override { rng_.fill(data, size); }
  void seek(std::uint64_t) override {}

 private:
  util::Rng rng_;
};

}  // namespace trainio::test
