#include <catch2/catch.hpp>

#include "util/paths.hpp"
#include "util/units.hpp"

using namespace trainio::util;

TEST_CASE("byte sizes parse in binary and decimal units") {
  CHECK(parse_bytes("4096") == 4096u);
  CHECK(parse_bytes("4KiB") == 4096u);
  CHECK(parse_bytes("4 KiB") == 4096u);
  CHECK(parse_bytes("4k") == 4096u);
  CHECK(parse_bytes("1.5GB") == 1500000000u);
  CHECK(parse_bytes("2MiB") == 2097152u);
  CHECK(parse_bytes("1TB") == 1000000000000u);
  CHECK_FALSE(parse_bytes("abc"));
  CHECK_FALSE(parse_bytes("-3"));
  CHECK_FALSE(parse_bytes("4 parsecs"));
  CHECK_FALSE(parse_bytes("1.3"));  // no fraction of a byte
  CHECK_FALSE(parse_bytes(""));
}

TEST_CASE("sizes, rates and durations print for people") {
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(4096) == "4.00 KiB");
  CHECK(format_bytes(146600628) == "139.81 MiB");
  CHECK(format_rate(1073741824.0) == "1.00 GiB/s");
  CHECK(format_duration(0.0000005) == "500 ns");
  CHECK(format_duration(0.0123) == "12.30 ms");
  CHECK(format_duration(3.5) == "3.50 s");
  CHECK(format_duration(125) == "2 min 5 s");
  CHECK(format_count(1234567) == "1,234,567");
  CHECK(format_count(123456) == "123,456");
  CHECK(format_count(12) == "12");
}

TEST_CASE("paths join like os.path.join") {
  CHECK(join("a/", "b") == "a/b");
  CHECK(join("./", "data/x") == "data/x");
  CHECK(join(".", "./data") == "data");
  CHECK(join("root", "/abs/data") == "/abs/data");
  CHECK(join("/", "x") == "/x");
  CHECK(join("a", "") == "a");
  CHECK(parent_of("a/b/c.npz") == "a/b");
  CHECK(parent_of("c.npz") == ".");
  CHECK(parent_of("/c") == "/");
  CHECK(strip_trailing_slashes("data/unet3d/") == "data/unet3d");
}
