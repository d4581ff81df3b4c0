#include <catch2/catch.hpp>

#include <zlib.h>

#include <cstring>
#include <vector>

#include "format/numpy/npy.hpp"
#include "format/archive/zip.hpp"

using namespace trainio;
using namespace trainio::format;

TEST_CASE("NPY headers match numpy 1.24 byte for byte") {
  const std::uint64_t shape[] = {64, 64, 1};
  const std::string h = npy::header(config::ElementType::uint8, shape);
  CHECK(h.size() == 128);
  CHECK(h.substr(0, 10) == std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  // numpy pads with spaces (room for the first axis to grow to 21 digits) and ends in '\n'.
  const std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (64, 64, 1), }";
  CHECK(h.substr(10, dict.size()) == dict);
  CHECK(h.back() == '\n');
  CHECK(h.find_first_not_of(' ', 10 + dict.size()) == h.size() - 1);

  const std::uint64_t labels[] = {1};
  const std::string y = npy::header(config::ElementType::int64, labels);
  CHECK(y.size() == 128);
  CHECK(y.find("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }") == 10);
  CHECK((npy::header(config::ElementType::float32, std::vector<std::uint64_t>{}).size() % 64) == 0);
}

TEST_CASE("NPY headers parse back") {
  const std::uint64_t shape[] = {12107, 12107, 7};
  const std::string h = npy::header(config::ElementType::float32, shape);
  std::string why;
  const auto parsed = npy::parse_header(h, &why);
  REQUIRE(parsed);
  CHECK(parsed->header_bytes == h.size());
  CHECK(parsed->descr == "<f4");
  CHECK(parsed->ndims == 3);
  CHECK(parsed->shape[2] == 7);
  CHECK(parsed->data_bytes() == 12107ull * 12107ull * 7 * 4);
  CHECK_FALSE(npy::parse_header("garbage!!!!", &why));
  CHECK_FALSE(npy::parse_header(h.substr(0, 40), &why));
  CHECK(why.find("cut short") != std::string::npos);
}

TEST_CASE("CRC-32 matches the standard check value") {
  CHECK(zip::crc32(0, "123456789", 9) == 0xCBF43926u);
  CHECK(zip::crc32(zip::crc32(0, "1234", 4), "56789", 5) == 0xCBF43926u);
}

TEST_CASE("local headers carry numpy's forced zip64 extra field") {
  zip::Member m;
  m.name = "x.npy";
  m.size = m.compressed_size = 1048704;
  m.crc32 = 0x53367018;
  const std::string h = zip::local_header(m);
  // The bytes numpy 1.24 writes for a 1024x1024x1 uint8 array (traced with Python's zipfile).
  const unsigned char expected[55] = {0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x21, 0x00,
                                      0x18, 0x70, 0x36, 0x53, 0x80, 0x00, 0x10, 0x00, 0x80, 0x00, 0x10, 0x00, 0x05, 0x00,
                                      0x14, 0x00, 'x',  '.',  'n',  'p',  'y',  0x01, 0x00, 0x10, 0x00, 0x80, 0x00, 0x10,
                                      0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00};
  REQUIRE(h.size() == 55);
  CHECK(std::memcmp(h.data(), expected, 55) == 0);
  CHECK(zip::local_header_size(m) == 55);
}

TEST_CASE("central directory and end record match zipfile's for small archives") {
  zip::Member x;
  x.name = "x.npy";
  x.size = x.compressed_size = 1048704;
  x.crc32 = 0x53367018;
  const std::string cd = zip::central_entry(x);
  const unsigned char expected[51] = {0x50, 0x4b, 0x01, 0x02, 0x14, 0x03, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                      0x00, 0x21, 0x00, 0x18, 0x70, 0x36, 0x53, 0x80, 0x00, 0x10, 0x00, 0x80, 0x00,
                                      0x10, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                      0x00, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 'x',  '.',  'n',  'p',  'y'};
  REQUIRE(cd.size() == 51);
  CHECK(std::memcmp(cd.data(), expected, 51) == 0);
  const std::string end = zip::end_records(2, 1048943, 102);
  const unsigned char eocd[22] = {0x50, 0x4b, 0x05, 0x06, 0, 0, 0, 0, 2, 0, 2, 0, 0x66, 0, 0, 0, 0x6f, 0x01, 0x10, 0, 0, 0};
  REQUIRE(end.size() == 22);
  CHECK(std::memcmp(end.data(), eocd, 22) == 0);
  const auto parsed = zip::parse_end_record(end);
  REQUIRE(parsed);
  CHECK(parsed->cd_offset == 1048943);
  const auto found = zip::find_in_central_directory(cd, "x.npy");
  REQUIRE(found);
  CHECK(found->size == 1048704);
  CHECK_FALSE(zip::find_in_central_directory(cd, "y.npy"));
}

TEST_CASE("past 2 GiB zipfile switches to zip64 fields and records") {
  zip::Member big;
  big.name = "x.npy";
  big.size = big.compressed_size = 3ull << 30;
  big.header_offset = 0;
  const std::string local = zip::local_header(big);
  CHECK(static_cast<unsigned char>(local[4]) == 45);  // version needed: zip64
  CHECK(local.substr(18, 8) == std::string(8, '\xff'));
  const std::string cd = zip::central_entry(big);
  CHECK(cd.size() == 46 + 5 + 4 + 16);
  const auto found = zip::find_in_central_directory(cd, "x.npy");
  REQUIRE(found);
  CHECK(found->size == (3ull << 30));
  const std::string end = zip::end_records(2, 3ull << 30, 102);
  CHECK(end.size() == 56 + 20 + 22);
  CHECK(end.substr(0, 4) == "PK\x06\x06");
  CHECK(end.substr(56, 4) == "PK\x06\x07");
  // Read back as the reader and validate do: the end record's 0xffffffff fields, then the zip64
  // end record's real ones (past 4 GiB and 2^32 entries).
  const std::string past = zip::end_records(5000000000ull, 5ull << 30, 6ull << 30);
  auto record = zip::parse_end_record(std::string_view(past).substr(past.size() - zip::kEndRecordSize));
  REQUIRE(record);
  CHECK(record->cd_offset == 0xffffffffu);
  REQUIRE(zip::read_zip64_end_record(std::string_view(past).substr(0, zip::kZip64EndRecordSize), *record));
  CHECK(record->entries == 5000000000ull);
  CHECK(record->cd_offset == (5ull << 30));
  CHECK(record->cd_size == (6ull << 30));
  CHECK_FALSE(zip::read_zip64_end_record(std::string_view(past).substr(1, zip::kZip64EndRecordSize), *record));
}

TEST_CASE("folded CRC-32 agrees with zlib for every length and alignment") {
  std::vector<unsigned char> data(70000);
  std::uint64_t x = 88172645463325252ull;
  for (auto& b : data) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<unsigned char>(x);
  }
  auto reference = [&](std::uint32_t crc, const unsigned char* p, std::size_t n) {
    return static_cast<std::uint32_t>(::crc32(crc, p, static_cast<uInt>(n)));
  };
  for (std::size_t offset : {0u, 1u, 7u, 15u}) {
    for (std::size_t n = 0; n < 300; ++n)
      REQUIRE(zip::crc32(0, data.data() + offset, n) == reference(0, data.data() + offset, n));
    for (std::size_t n : {4096u, 65535u, 65536u, 69985u})
      REQUIRE(zip::crc32(0x12345678, data.data() + offset, n) == reference(0x12345678, data.data() + offset, n));
  }
}
