#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <string>

#include "storage/fs.hpp"
#include "unit/temp_dir.hpp"
#include "util/error.hpp"

using namespace trainio;

TEST_CASE("a folder's entries are visited as it is read, and the visit can stop early or remove what it sees") {
  test::TempDir dir("for-each-entry");
  for (int i = 0; i < 50; ++i) std::ofstream(dir / (std::to_string(i) + ".file")) << "x";
  storage::make_dirs(dir / "sub");

  std::set<std::string> seen;
  CHECK(storage::for_each_entry(dir.path(), [&](const std::string& name) {
    seen.insert(name);
    return true;
  }));
  CHECK(seen.size() == 51);  // 50 files and sub; no "." or ".."
  CHECK(seen.count("sub") == 1);

  int visited = 0;
  CHECK_FALSE(storage::for_each_entry(dir.path(), [&](const std::string&) { return ++visited < 3; }));
  CHECK(visited == 3);

  CHECK(storage::for_each_entry(dir.path(), [&](const std::string& name) {
    if (name != "sub") storage::remove_file(dir / name);
    return true;
  }));
  CHECK(storage::list_dir(dir.path()) == std::vector<std::string>{"sub"});

  CHECK(storage::for_each_entry(dir / "nowhere", [](const std::string&) { return false; }));  // nothing to visit
  std::ofstream(dir / "plain") << "x";
  CHECK_THROWS_AS(storage::for_each_entry(dir / "plain", [](const std::string&) { return true; }), Error);
}
