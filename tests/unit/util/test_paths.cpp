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

TEST_CASE("runs are named by what tells their folders apart", "[util][paths]") {
  using trainio::util::without_common_folders;
  using V = std::vector<std::string>;
  CHECK(without_common_folders(V{"/s/a/run1", "/s/b/run1/"}) == V{"a/run1", "b/run1"});
  CHECK(without_common_folders(V{"out/r1", "out/r2"}) == V{"r1", "r2"});
  CHECK(without_common_folders(V{"s/ab", "s/ac"}) == V{"ab", "ac"});  // not cut inside a name
  CHECK(without_common_folders(V{"s/a", "s/a/b"}) == V{"a", "a/b"});
  CHECK(without_common_folders(V{"/x/y/run"}) == V{"run"});
  CHECK(without_common_folders(V{}).empty());
}
