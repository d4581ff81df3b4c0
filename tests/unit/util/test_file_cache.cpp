#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "util/file_cache.hpp"

using trainio::util::FileCache;

namespace {

// A handle that says when it is closed (destroyed while holding its file).
struct Handle {
  std::uint64_t file = 0;
  std::shared_ptr<std::vector<std::uint64_t>> closed;
  Handle(std::uint64_t f, std::shared_ptr<std::vector<std::uint64_t>> c) : file(f), closed(std::move(c)) {}
  Handle(Handle&& o) noexcept : file(o.file), closed(std::move(o.closed)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (closed) closed->push_back(file);
    file = o.file;
    closed = std::move(o.closed);
    return *this;
  }
  ~Handle() {
    if (closed) closed->push_back(file);
  }
};

}  // namespace

TEST_CASE("a file cache keeps the files used last and closes the least recently used") {
  auto closed = std::make_shared<std::vector<std::uint64_t>>();
  FileCache<Handle> cache(3);
  for (std::uint64_t f : {10, 20, 30}) cache.insert(f, Handle(f, closed));
  CHECK(cache.size() == 3);
  REQUIRE(cache.find(10) != nullptr);  // 10 is now the most recently used: 20 goes first
  cache.insert(40, Handle(40, closed));
  CHECK(*closed == std::vector<std::uint64_t>{20});
  CHECK(cache.find(20) == nullptr);
  CHECK(cache.find(10)->file == 10);
  cache.insert(50, Handle(50, closed));  // 30 is the least recently used now
  CHECK(*closed == std::vector<std::uint64_t>{20, 30});
  CHECK(cache.size() == 3);
}

TEST_CASE("a file cache never holds more than its capacity, whatever the order of files") {
  FileCache<std::uint64_t> cache(256);
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const std::uint64_t f = (i * 7919) % 1000;
    cache.get_or_insert(f, [&] { return f * 2; });
    REQUIRE(cache.size() <= 256);
  }
  CHECK(cache.size() == 256);
}

TEST_CASE("get_or_insert makes a value only for a file not kept") {
  FileCache<std::string> cache(2);
  int made = 0;
  auto make = [&] {
    ++made;
    return std::string("handle");
  };
  cache.get_or_insert(1, make);
  cache.get_or_insert(1, make);
  CHECK(made == 1);
  cache.get_or_insert(2, make);
  cache.get_or_insert(3, make);  // drops 1
  cache.get_or_insert(1, make);
  CHECK(made == 4);
}

TEST_CASE("a file cache replaces, erases and clears, closing what it drops") {
  auto closed = std::make_shared<std::vector<std::uint64_t>>();
  FileCache<Handle> cache(4);
  cache.insert(1, Handle(1, closed));
  cache.insert(1, Handle(1, closed));  // the old handle of file 1 is closed
  CHECK(closed->size() == 1);
  cache.insert(2, Handle(2, closed));
  cache.erase(2);
  CHECK(closed->back() == 2);
  cache.erase(99);  // not kept: nothing happens
  cache.clear();
  CHECK(closed->back() == 1);
  CHECK(cache.size() == 0);
}
