#include <catch2/catch.hpp>

#include <string>

#include "format/crc32c.hpp"
#include "format/tfrecord/tfrecord.hpp"

using namespace trainio::format;

TEST_CASE("CRC-32C matches its check value, with and without the CPU instruction path") {
  CHECK(crc32c::value("123456789", 9) == 0xE3069283u);
  CHECK(crc32c::extend(crc32c::value("1234", 4), "56789", 5) == 0xE3069283u);
  const std::string zeros(32, '\0');
  CHECK(crc32c::value(zeros.data(), zeros.size()) == 0x8A9136AAu);  // RFC 3720 test vector
  std::string ones(32, '\xff');
  CHECK(crc32c::value(ones.data(), ones.size()) == 0x62A8AB43u);
}

TEST_CASE("TensorFlow's CRC mask round-trips") {
  for (std::uint32_t v : {0u, 1u, 0xE3069283u, 0xffffffffu}) CHECK(crc32c::unmask(crc32c::mask(v)) == v);
  CHECK(crc32c::mask(0) == 0xa282ead8u);
}

TEST_CASE("record headers carry the length and its masked CRC") {
  const std::string h = tfrecord::record_header(2553);
  REQUIRE(h.size() == 12);
  CHECK(static_cast<unsigned char>(h[0]) == (2553 & 0xff));
  CHECK(static_cast<unsigned char>(h[1]) == (2553 >> 8));
  std::uint32_t crc = 0;
  for (int i = 0; i < 4; ++i) crc |= static_cast<std::uint32_t>(static_cast<unsigned char>(h[8 + i])) << (8 * i);
  CHECK(crc == crc32c::mask(crc32c::value(h.data(), 8)));
}

TEST_CASE("the Example frame parses back, for image sizes across varint boundaries") {
  for (std::uint64_t image : {0ull, 1ull, 127ull, 128ull, 2500ull, 16383ull, 16384ull, 2097152ull}) {
    const auto frame = tfrecord::example_frame(image, 50);
    const std::string data = frame.prefix + std::string(image, 'x') + frame.suffix;
    CHECK(data.size() == frame.data_bytes());
    std::uint64_t parsed = 0;
    std::int64_t size = 0;
    REQUIRE(tfrecord::parse_example(data, parsed, size));
    CHECK(parsed == image);
    CHECK(size == 50);
  }
  std::uint64_t image = 0;
  std::int64_t size = 0;
  CHECK_FALSE(tfrecord::parse_example("not a protobuf", image, size));
}
