#include <catch2/catch.hpp>

#include <algorithm>

#include "util/kernel_touch.hpp"
#include "util/page_aligned.hpp"

TEST_CASE("zero_through_kernel zeroes every byte asked, and none beyond") {
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{3 << 20} + 17}) {
    trainio::util::Bytes buffer(size + 64, 'x');
    trainio::util::zero_through_kernel(buffer.data() + 32, size);
    CHECK(std::all_of(buffer.begin(), buffer.begin() + 32, [](char c) { return c == 'x'; }));
    CHECK(std::all_of(buffer.begin() + 32, buffer.begin() + 32 + static_cast<std::ptrdiff_t>(size),
                      [](char c) { return c == 0; }));
    CHECK(std::all_of(buffer.end() - 32, buffer.end(), [](char c) { return c == 'x'; }));
  }
}

TEST_CASE("resize_touched gives a buffer of the size asked, all zero, what it held before included") {
  trainio::util::Bytes buffer(100, 'x');
  trainio::util::resize_touched(buffer, 9000);
  CHECK(buffer.size() == 9000);
  CHECK(std::all_of(buffer.begin(), buffer.end(), [](char c) { return c == 0; }));
}
