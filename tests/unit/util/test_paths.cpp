#include <catch2/catch.hpp>

#include "util/paths.hpp"

using trainio::util::is_within;
using trainio::util::join;

TEST_CASE("join keeps single slashes and absolute right-hand sides", "[util][paths]") {
  CHECK(join("a/", "b") == "a/b");
  CHECK(join(".", "b") == "b");
  CHECK(join("a", "/abs") == "/abs");
  CHECK(join("a", "./b") == "a/b");
}

TEST_CASE("is_within compares normalised paths, not text", "[util][paths]") {
  CHECK(is_within("data/o", "data"));
  CHECK(is_within("data/./o/", "./data/"));
  CHECK(is_within("data", "data"));
  CHECK(is_within("x/../data/o", "data"));
  CHECK_FALSE(is_within("data2/o", "data"));
  CHECK_FALSE(is_within("data/../o", "data"));
  CHECK_FALSE(is_within("o", "data"));
  CHECK(is_within("/a/b/c", "/a"));
  CHECK_FALSE(is_within("/a", "/a/b"));
}
