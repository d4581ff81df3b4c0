#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "storage/fs.hpp"
#include "storage/new_file.hpp"
#include "unit/storage/observed_calls.hpp"
#include "unit/temp_dir.hpp"
#include "util/error.hpp"

using namespace trainio;
namespace fs = std::filesystem;

namespace {

std::string contents(const std::string& path) {
  std::ostringstream text;
  text << std::ifstream(path, std::ios::binary).rdbuf();
  return text.str();
}

// Everything in the folder, names only, sorted: what a reader listing it would find.
std::string listing(const test::TempDir& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : " ") + n;
  return s;
}

}  // namespace

TEST_CASE("a new file takes its name only when committed, whole") {
  test::TempDir dir("new-file");
  const std::string path = dir / "data.npz";
  test::Calls calls;
  {
    const storage::ScopedObserver observe(&calls);
    storage::NewFile out(path);
    out.write_at("world", 5, 6);
    out.write_at("hello ", 6, 0);
    CHECK(out.local_path() == storage::temp_path_for(path));
    CHECK_FALSE(fs::exists(path));  // nobody reads part of it under its name
    out.commit();
  }
  CHECK(contents(path) == "hello world");
  CHECK(listing(dir) == "data.npz");
  CHECK(calls.sequence() == "open write write close rename");
}

TEST_CASE("a new file dropped without commit leaves nothing, and the file it was to replace is untouched") {
  test::TempDir dir("new-file");
  const std::string path = dir / "data.npz";
  std::ofstream(path) << "old";
  {
    storage::NewFile out(path);
    out.write_at("new bytes", 9, 0);
  }
  CHECK(contents(path) == "old");
  CHECK(listing(dir) == "data.npz");
}

TEST_CASE("a new file written in place (checkpoints without atomic_files) is removed when dropped") {
  test::TempDir dir("new-file");
  const std::string path = dir / "model.pt";
  {
    storage::NewFile out(path, {.in_place = true, .access = storage::Access::write_truncate});
    CHECK(out.local_path() == path);
    out.write_at("tensor", 6, 0);
    CHECK(contents(path) == "tensor");
  }
  CHECK(listing(dir).empty());
  test::Calls calls;
  {
    const storage::ScopedObserver observe(&calls);
    storage::NewFile out(path, {.in_place = true, .access = storage::Access::write_truncate});
    out.write_at("tensor", 6, 0);
    out.commit();
  }
  CHECK(contents(path) == "tensor");
  CHECK(calls.sequence() == "open write close");  // no rename
}

TEST_CASE("a temporary left by an interrupted run is cleared only when asked, else creating names it") {
  test::TempDir dir("new-file");
  const std::string path = dir / "data.npy";
  std::ofstream(storage::temp_path_for(path)) << "left by a killed run";
  try {
    storage::NewFile out(path);
    FAIL("created over a leftover temporary");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains(storage::temp_path_for(path)));
  }
  storage::NewFile out(path, {.remove_leftover = true});
  out.write_at("x", 1, 0);
  out.commit();
  CHECK(listing(dir) == "data.npy");
}

TEST_CASE("a new file a library writes by name is only named, renamed or removed") {
  test::TempDir dir("new-file");
  const std::string path = dir / "data.hdf5";
  {
    storage::NewFile out(path, {.opened_by_library = true});
    CHECK(listing(dir).empty());  // libhdf5 creates it itself, exclusively
    std::ofstream(out.local_path()) << "hdf5";
    out.commit();
  }
  CHECK(contents(path) == "hdf5");
  {
    storage::NewFile out(dir / "other.hdf5", {.opened_by_library = true});
    std::ofstream(out.local_path()) << "half";
  }
  CHECK(listing(dir) == "data.hdf5");
}

TEST_CASE("a durable new file syncs the file before its rename and the folder after it") {
  test::TempDir dir("new-file");
  test::Calls calls;
  {
    const storage::ScopedObserver observe(&calls);
    storage::NewFile out(dir / "summary.json", {.durable = true});
    out.write_at("{}", 2, 0);
    out.commit();
  }
  CHECK(calls.sequence().starts_with("open write fsync close rename"));
  CHECK(calls.count(storage::Op::fsync) == 2);
}
