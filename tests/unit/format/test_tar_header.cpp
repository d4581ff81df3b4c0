#include <catch2/catch.hpp>

#include <string>

#include "format/archive/tar.hpp"

using namespace trainio;

TEST_CASE("a tar member header is checked in place: checksum, magic, name, type and size") {
  const std::string h = format::tar::header("img_1_of_4_000012.bin", 4096);
  CHECK(format::tar::header_problem(h.data(), "img_1_of_4", 12, ".bin", 4096) == nullptr);
  CHECK(format::tar::stem_of("data/train/img_1_of_4.tar") == "img_1_of_4");
  CHECK(std::string(format::tar::header_problem(h.data(), "img_1_of_4", 13, ".bin", 4096)) == "another member's name");
  CHECK(std::string(format::tar::header_problem(h.data(), "img_1_of_4", 12, ".cls", 4096)) == "another member's name");
  CHECK(std::string(format::tar::header_problem(h.data(), "img_2_of_4", 12, ".bin", 4096)) == "another member's name");
  CHECK(std::string(format::tar::header_problem(h.data(), "img_1_of_4", 12, ".bin", 4095)) == "another size");
  std::string flipped = h;
  flipped[3] ^= 1;
  CHECK(std::string(format::tar::header_problem(flipped.data(), "img_1_of_4", 12, ".bin", 4096)) == "bad header checksum");
  // Sample numbers past six digits widen the name, as the writer's {:06} does.
  const std::string wide = format::tar::header("s_1234567.cls", 1);
  CHECK(format::tar::header_problem(wide.data(), "s", 1234567, ".cls", 1) == nullptr);
  const std::string zeros(512, '\0');
  CHECK(std::string(format::tar::header_problem(zeros.data(), "s", 0, ".bin", 1)) == "bad header checksum");  // an end block
}
