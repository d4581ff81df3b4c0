#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "engine/cache/tier_directory.hpp"

using namespace trainio;
using engine::kTierPageBytes;
using engine::TierDirectory;
using engine::TierGeometry;
using engine::TierPolicy;

namespace {

// A directory over plain memory (one process; the node's ranks share the same layout).
struct Tier {
  Tier(std::uint64_t files, std::uint64_t capacity, TierPolicy policy, bool holds_data = false)
      : geometry{files, capacity, holds_data},
        memory(engine::tier_segment_bytes(geometry) / sizeof(std::uint64_t) + 1),
        dir(memory.data(), geometry, policy, true) {}
  TierGeometry geometry;
  std::vector<std::uint64_t> memory;
  TierDirectory dir;
  std::vector<std::uint64_t> evicted;
  std::uint64_t evictions = 0;

  bool fill(std::uint64_t file, std::uint64_t size, bool may_evict = true) {
    TierDirectory::Held held;
    if (!dir.reserve(file, size, may_evict, [&](std::uint64_t f, std::uint32_t) { evicted.push_back(f); }, evictions, held))
      return false;
    dir.commit(file);
    dir.release(file);
    return true;
  }
  std::vector<std::uint64_t> resident() {
    std::vector<std::uint64_t> out;
    dir.for_each_resident([&](std::uint64_t f, std::uint32_t) { out.push_back(f); });
    return out;
  }
};

constexpr std::uint64_t kFile = 3 * kTierPageBytes;  // three pages each

}  // namespace

TEST_CASE("tier directory: files take whole pages and the capacity is never exceeded", "[tier]") {
  Tier t(10, 4 * kFile + kTierPageBytes - 1, TierPolicy::lru);  // room for 4 files (a partial page counts for nothing)
  CHECK(t.dir.capacity_pages() == 12);
  for (std::uint64_t f = 0; f < 4; ++f) CHECK(t.fill(f, kFile));
  CHECK(t.dir.used_pages() == 12);
  CHECK_FALSE(t.fill(4, kFile, false));  // no room without evicting
  CHECK(t.dir.resident_files() == 4);
  CHECK(engine::tier_pages(1) == 1);
  CHECK(engine::tier_pages(kTierPageBytes + 1) == 2);
  CHECK_FALSE(t.fill(5, 13 * kTierPageBytes));  // larger than the tier: not admitted, nothing evicted
  CHECK(t.evicted.empty());
  CHECK_FALSE(t.dir.may_admit(5));  // and never again: its backing file is not opened for it in vain
  CHECK_FALSE(t.dir.taken(5));
}

TEST_CASE("tier directory: lru evicts the least recently read, fifo the first filled", "[tier]") {
  for (const auto policy : {TierPolicy::lru, TierPolicy::fifo}) {
    Tier t(10, 3 * kFile, policy);
    for (std::uint64_t f = 0; f < 3; ++f) REQUIRE(t.fill(f, kFile));
    // File 0 is read again: under lru it becomes the most recent.
    const auto held = t.dir.acquire(0);
    REQUIRE(held.resident);
    CHECK(held.size == kFile);
    t.dir.release(0);
    REQUIRE(t.fill(3, kFile));
    REQUIRE(t.evicted.size() == 1);
    CHECK(t.evicted[0] == (policy == TierPolicy::lru ? 1u : 0u));
    CHECK(t.evictions == 1);
    CHECK_FALSE(t.dir.resident(t.evicted[0]));
    CHECK(t.dir.may_admit(t.evicted[0]));
  }
}

TEST_CASE("tier directory: static fills once and never evicts", "[tier]") {
  Tier t(10, 5 * kFile, TierPolicy::fill_once);
  for (std::uint64_t f = 0; f < 10; ++f) t.fill(f, kFile);
  CHECK(t.resident() == std::vector<std::uint64_t>{0, 1, 2, 3, 4});
  CHECK(t.evicted.empty());
  CHECK_FALSE(t.dir.may_admit(7));
  // Full from the first file that does not fit, even if a smaller one would.
  Tier u(10, 5 * kFile, TierPolicy::fill_once);
  REQUIRE(u.fill(0, 4 * kFile));
  CHECK_FALSE(u.fill(1, 2 * kFile));
  CHECK_FALSE(u.dir.may_admit(2));
}

TEST_CASE("tier directory: a pinned file is never evicted, and nothing is when no room can be made", "[tier]") {
  Tier t(10, 2 * kFile, TierPolicy::lru);
  REQUIRE(t.fill(0, kFile));
  REQUIRE(t.fill(1, kFile));
  REQUIRE(t.dir.acquire(0).resident);  // a reader holds 0
  REQUIRE(t.dir.acquire(1).resident);  // and 1
  CHECK_FALSE(t.fill(2, kFile));
  CHECK(t.evicted.empty());
  t.dir.release(0);
  CHECK(t.fill(2, kFile));
  CHECK(t.evicted == std::vector<std::uint64_t>{0});
  t.dir.release(1);
}

TEST_CASE("tier directory: a file being filled is neither resident nor admitted twice, and an abandoned fill frees its room", "[tier]") {
  Tier t(4, 2 * kFile, TierPolicy::lru);
  TierDirectory::Held held;
  REQUIRE(t.dir.reserve(1, kFile, true, [](std::uint64_t, std::uint32_t) {}, t.evictions, held));
  CHECK_FALSE(t.dir.resident(1));
  CHECK(t.dir.taken(1));
  CHECK_FALSE(t.dir.acquire(1).resident);
  CHECK_FALSE(t.dir.may_admit(1));
  CHECK_FALSE(t.dir.reserve(1, kFile, true, [](std::uint64_t, std::uint32_t) {}, t.evictions, held));
  t.dir.abandon(1);
  CHECK_FALSE(t.dir.taken(1));
  CHECK(t.dir.may_admit(1));
  CHECK(t.dir.used_pages() == 0);
}

TEST_CASE("tier directory: the memory tier's pages hold each file's bytes, found through its page tables", "[tier]") {
  // 3-page files take a table page too; a 1,030-page file takes two.
  Tier t(8, 1500 * kTierPageBytes, TierPolicy::fifo, true);
  auto write = [&](std::uint64_t file, std::uint64_t size) {
    TierDirectory::Held held;
    REQUIRE(t.dir.reserve(file, size, true, [](std::uint64_t, std::uint32_t) {}, t.evictions, held));
    auto pages = t.dir.cursor(held, 0);
    for (std::uint64_t k = 0; k < engine::tier_pages(size); ++k) {
      std::byte* page = t.dir.next(pages);
      std::memset(page, static_cast<int>(file + 1), kTierPageBytes);
      std::memcpy(page, &k, sizeof k);  // each page knows its place
    }
    t.dir.commit(file);
    t.dir.release(file);
  };
  auto check = [&](std::uint64_t file, std::uint64_t from) {
    const auto held = t.dir.acquire(file);
    REQUIRE(held.resident);
    auto pages = t.dir.cursor(held, from);
    for (std::uint64_t k = from; k < engine::tier_pages(held.size); ++k) {
      const std::byte* page = t.dir.next(pages);
      std::uint64_t place = 0;
      std::memcpy(&place, page, sizeof place);
      CHECK(place == k);
      CHECK(static_cast<int>(page[kTierPageBytes - 1]) == static_cast<int>(file + 1));
    }
    t.dir.release(file);
  };
  write(0, 1030 * kTierPageBytes);
  for (std::uint64_t f = 1; f < 5; ++f) write(f, kFile);
  CHECK(t.dir.used_pages() == 1030 + 2 + 4 * (3 + 1));
  check(0, 0);
  check(0, 1025);  // a page in the second table
  write(5, 900 * kTierPageBytes);  // evicts file 0 (fifo): its pages now hold file 5's
  CHECK(t.evictions == 1);
  for (std::uint64_t f = 1; f < 6; ++f) check(f, 0);
  check(5, 333);
  write(6, kTierPageBytes / 2);  // a partial page
  check(6, 0);
}

TEST_CASE("tier directory: concurrent readers fill and read without losing room or pages", "[tier][threads]") {
  Tier t(64, 16 * kFile, TierPolicy::lru, true);
  std::vector<std::thread> threads;
  std::atomic<int> wrong_bytes{0};  // Catch2's assertions are not thread-safe: counted, checked after
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      std::uint64_t evictions = 0;
      for (int round = 0; round < 400; ++round) {
        const std::uint64_t file = static_cast<std::uint64_t>((round * 7 + k * 13) % 64);
        auto held = t.dir.acquire(file);
        if (!held.resident) {
          if (!t.dir.reserve(file, kFile, true, [](std::uint64_t, std::uint32_t) {}, evictions, held)) continue;
          auto pages = t.dir.cursor(held, 0);
          for (int p = 0; p < 3; ++p) std::memset(t.dir.next(pages), static_cast<int>(file), kTierPageBytes);
          held = t.dir.commit(file);
        }
        // Pinned: its pages still hold this file's bytes.
        auto pages = t.dir.cursor(held, 2);
        if (static_cast<int>(t.dir.next(pages)[0]) != static_cast<int>(file)) ++wrong_bytes;
        t.dir.release(file);
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong_bytes == 0);
  CHECK(t.dir.used_pages() == 4 * t.dir.resident_files());  // 3 data pages and a table page each
  CHECK(t.dir.resident_files() <= 12);
}

TEST_CASE("tier directory: every fill of a file has a generation of its own", "[tier]") {
  // The local tier names copies by it: removing an evicted copy after the lock is released never
  // removes a newer copy of the same file.
  Tier t(4, kFile, TierPolicy::lru);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> evicted;
  auto fill = [&](std::uint64_t file) {
    TierDirectory::Held held;
    REQUIRE(t.dir.reserve(file, kFile, true, [&](std::uint64_t f, std::uint32_t g) { evicted.emplace_back(f, g); },
                          t.evictions, held));
    t.dir.commit(file);
    t.dir.release(file);
    return held.generation;
  };
  const auto first = fill(0);
  fill(1);  // evicts 0
  const auto again = fill(0);  // evicts 1
  CHECK(again != first);
  REQUIRE(evicted.size() == 2);
  CHECK(evicted[0] == std::make_pair(std::uint64_t{0}, first));
  CHECK(t.dir.acquire(0).generation == again);
  t.dir.release(0);
}
