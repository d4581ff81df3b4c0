#include <catch2/catch.hpp>

#include "engine/checkpoint/async_checkpointer.hpp"

using namespace trainio;

TEST_CASE("the snapshot buffer holds the in-flight shards up to its cap, in whole pages", "[engine]") {
  // A shard under the cap: one shard per checkpoint in flight, rounded up to a page.
  CHECK(engine::async_buffer_size(256u << 20, 8388608 + 4000, 1) == 8388608 + 4096);
  CHECK(engine::async_buffer_size(256u << 20, 10u << 20, 2) == 20u << 20);
  // Larger than the cap: the cap (a page at least), never memory in proportion to the model.
  CHECK(engine::async_buffer_size(1u << 20, 8u << 20, 1) == 1u << 20);
  CHECK(engine::async_buffer_size(256u << 20, 200u << 20, 2) == 256u << 20);
  CHECK(engine::async_buffer_size(5000, 1u << 30, 1) == 4096);
  CHECK(engine::async_buffer_size(256u << 20, 1ull << 62, 1000) == 256u << 20);  // no overflow
  // A rank that writes nothing holds no buffer.
  CHECK(engine::async_buffer_size(256u << 20, 0, 1) == 0);
}

TEST_CASE("a snapshot takes its bytes over the bandwidth, rounded up to the nanosecond", "[engine]") {
  CHECK(engine::snapshot_ns_at(1'000'000'000, 1'000'000'000) == 1'000'000'000);
  CHECK(engine::snapshot_ns_at(25'000'000'000ull, 25'000'000'000ull) == 1'000'000'000);
  CHECK(engine::snapshot_ns_at(1, 3) == 333'333'334);
  CHECK(engine::snapshot_ns_at(0, 1000) == 0);
}
