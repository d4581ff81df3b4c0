#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "engine/load/shuffle_buffer.hpp"

using trainio::engine::ShuffleBuffer;

namespace {

// Runs inputs 0..n-1 through the buffer as TensorFlow's shuffle does: fill, then draw one and
// refill one.
std::vector<std::uint64_t> shuffle(std::uint64_t n, std::size_t capacity, std::uint64_t seed) {
  ShuffleBuffer buffer(capacity, seed);
  std::vector<std::uint64_t> out;
  std::uint64_t next = 0;
  while (true) {
    while (!buffer.full() && next < n) buffer.push(next++);
    if (buffer.empty()) break;
    out.push_back(buffer.take());
    // An element can only come out once it has entered: never more than `capacity` ahead.
    REQUIRE(out.back() < out.size() - 1 + capacity);
  }
  return out;
}

}  // namespace

TEST_CASE("the shuffle buffer puts out every element once, no further than its size from its place") {
  const auto out = shuffle(1000, 64, 1);
  CHECK(out.size() == 1000);
  CHECK(std::set<std::uint64_t>(out.begin(), out.end()).size() == 1000);
  std::vector<std::uint64_t> identity(1000);
  for (std::uint64_t i = 0; i < 1000; ++i) identity[i] = i;
  CHECK(out != identity);
}

TEST_CASE("the shuffle buffer is reproducible by seed, and a buffer of one keeps the order") {
  CHECK(shuffle(500, 32, 9) == shuffle(500, 32, 9));
  CHECK(shuffle(500, 32, 9) != shuffle(500, 32, 10));
  const auto kept = shuffle(50, 1, 3);
  for (std::uint64_t i = 0; i < 50; ++i) CHECK(kept[i] == i);
}
