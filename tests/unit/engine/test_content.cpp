#include <catch2/catch.hpp>

#include <zlib.h>

#include <set>
#include <string>
#include <vector>

#include "engine/content.hpp"

using namespace trainio;

namespace {
double zlib_ratio(const std::vector<unsigned char>& data) {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::vector<unsigned char> out(size);
  REQUIRE(compress2(out.data(), &size, data.data(), static_cast<uLong>(data.size()), 1) == Z_OK);
  return static_cast<double>(data.size()) / static_cast<double>(size);
}
}  // namespace

TEST_CASE("random content does not compress") {
  engine::RandomContent c(1);
  std::vector<unsigned char> data(1 << 20);
  c.fill(data.data(), data.size());
  CHECK(zlib_ratio(data) < 1.01);
}

TEST_CASE("compressible content compresses by about the asked ratio, across uneven fills") {
  for (double ratio : {2.0, 3.0, 5.0}) {
    engine::CompressibleContent c(7, ratio);
    std::vector<unsigned char> data(1 << 20);
    // Uneven pieces: the block pattern must continue across fill() calls.
    std::size_t at = 0;
    for (std::size_t piece : {1000u, 4096u, 3u, 70000u}) {
      c.fill(data.data() + at, piece);
      at += piece;
    }
    c.fill(data.data() + at, data.size() - at);
    INFO("ratio " << ratio);
    CHECK(zlib_ratio(data) == Approx(ratio).epsilon(0.2));
    // Every 4 KiB block is different: nothing for deduplication.
    std::set<std::string> blocks;
    for (std::size_t b = 0; b + 4096 <= data.size(); b += 4096)
      blocks.insert(std::string(reinterpret_cast<const char*>(data.data() + b), 4096));
    CHECK(blocks.size() == data.size() / 4096);
  }
}

TEST_CASE("random content is the same however it is cut into fill() calls, and differs per seed") {
  std::vector<unsigned char> whole(50000), pieces(50000), other(50000);
  engine::RandomContent a(42), b(42), c(43);
  a.fill(whole.data(), whole.size());
  std::size_t at = 0;
  for (std::size_t piece : {1u, 4095u, 4096u, 10000u, 7u}) {
    b.fill(pieces.data() + at, piece);
    at += piece;
  }
  b.fill(pieces.data() + at, pieces.size() - at);
  CHECK(whole == pieces);
  c.fill(other.data(), other.size());
  CHECK(whole != other);
  std::set<std::string> blocks;
  for (std::size_t i = 0; i + 4096 <= whole.size(); i += 4096)
    blocks.insert(std::string(reinterpret_cast<const char*>(whole.data() + i), 4096));
  CHECK(blocks.size() == whole.size() / 4096);
}

TEST_CASE("content continues from any offset: a file written in parts has the bytes of one writer") {
  std::vector<unsigned char> whole(30000), parts(30000);
  engine::RandomContent a(9);
  a.fill(whole.data(), whole.size());
  for (std::size_t start : {0u, 10000u, 4096u + 7u, 25000u}) {
    engine::RandomContent b(9);
    b.seek(start);
    b.fill(parts.data() + start, whole.size() - start);
    CHECK(std::equal(parts.begin() + static_cast<long>(start), parts.end(), whole.begin() + static_cast<long>(start)));
  }
  engine::CompressibleContent c(3, 2.0), d(3, 2.0);
  std::vector<unsigned char> cw(30000), cp(30000);
  c.fill(cw.data(), cw.size());
  d.seek(12345);
  d.fill(cp.data() + 12345, cp.size() - 12345);
  CHECK(std::equal(cp.begin() + 12345, cp.end(), cw.begin() + 12345));
}

TEST_CASE("random content's own CRC-32 equals zlib's over the bytes it made, from any offset and in any pieces") {
  // Whole blocks are summed without reading them (pool CRC and key tables): it must be exact.
  for (const std::uint64_t seed : {1u, 77u, 123456789u}) {
    for (const std::uint64_t start : {0u, 1u, 4095u, 4096u, 8191u + 4096u * 300u}) {
      for (const std::size_t size : {0u, 10u, 4096u, 4097u, 3u * 4096u + 5u, 300000u}) {
        engine::RandomContent plain(seed), summed(seed);
        plain.seek(start);
        summed.seek(start);
        std::vector<unsigned char> expected(size), got(size);
        plain.fill(expected.data(), size);
        std::uint32_t crc = 0x12345678;  // continuing a CRC already running
        // In two pieces, the cut off any block boundary.
        const std::size_t cut = size / 3;
        summed.fill_crc32(got.data(), cut, crc);
        summed.fill_crc32(got.data() + cut, size - cut, crc);
        INFO("seed " << seed << ", start " << start << ", size " << size);
        REQUIRE(got == expected);
        // (zlib's crc32 answers 0 for a null buffer: an empty fill leaves the CRC as it was)
        CHECK(crc == (size == 0 ? 0x12345678 : crc32(0x12345678, expected.data(), static_cast<uInt>(size))));
      }
    }
  }
}
