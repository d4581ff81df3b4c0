#include <catch2/catch.hpp>

#include <cerrno>
#include <fstream>
#include <set>
#include <string>

#include "storage/errno_hint.hpp"
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

TEST_CASE("a storage error's fix names the folder its path lies in, by the key that sets it") {
  storage::forget_folder_names();
  CHECK(storage::hint_for_errno("pwrite", ENOSPC, "out/run/.x.trainio-tmp").find("data/checkpoint folder") !=
        std::string::npos);  // no folder named: the general fix
  storage::name_folder("data", "dataset.data_folder", true);
  storage::name_folder("out/run", "the results folder (--output or output.folder)");
  CHECK(storage::hint_for_errno("pwrite", ENOSPC, "out/run/.x.trainio-tmp") ==
        "the file system holding the results folder (--output or output.folder) is full: free space there, or point it "
        "elsewhere");
  CHECK(storage::hint_for_errno("open", ENOENT, "data/train/img_1.npz").find("generate the dataset") != std::string::npos);
  CHECK(storage::hint_for_errno("open", ENOENT, "out/run/live/x.json").find("generate") == std::string::npos);
  storage::forget_folder_names();
}
