#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "storage/fs.hpp"
#include "storage/new_file.hpp"
#include "storage/sync_queue.hpp"
#include "unit/storage/observed_calls.hpp"
#include "unit/temp_dir.hpp"
#include "util/error.hpp"

using namespace trainio;
namespace fs = std::filesystem;

namespace {

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes `text` to a new file at `writing` and returns it open, as a writer hands it over.
storage::File written(const std::string& writing, const std::string& text) {
  storage::File f = storage::File::open(writing, {.access = storage::Access::write_new});
  f.pwrite_all(text.data(), text.size(), 0);
  return f;
}

}  // namespace

TEST_CASE("a sync queue publishes each file after its sync, in order, and syncs the folders after") {
  test::TempDir dir("sync-queue");
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  test::Calls calls;
  {
    const storage::ScopedObserver observe(&calls);
    storage::SyncQueue queue(4);
    for (int i = 0; i < 40; ++i) {
      const std::string path = dir / (i % 2 ? "a/" : "b/") + std::to_string(i);
      const std::string writing = i % 3 ? storage::temp_path_for(path) : path;  // every third in place
      queue.commit(written(writing, "file " + std::to_string(i)), writing, path);
    }
    queue.finish();
    // Each file: its sync (recorded on the writer's thread), close, and the rename unless in
    // place; then one fsync per folder.
    CHECK(calls.count(storage::Op::fsync) == 40 + 2);
    CHECK(calls.count(storage::Op::close) == 40);
    CHECK(calls.count(storage::Op::rename) == 40 - 14);
    const auto& e = calls.events;
    REQUIRE(e.size() >= 2);
    CHECK(e[e.size() - 1].op == storage::Op::fsync);
    CHECK(e[e.size() - 2].op == storage::Op::fsync);
    CHECK(e[e.size() - 3].op != storage::Op::fsync);  // the folders after the last file
    // A folder is no file of the characterization's: no identity, not data.
    CHECK(e.back().file == 0);
    CHECK_FALSE(e.back().data);
  }
  for (int i = 0; i < 40; ++i) {
    const std::string path = dir / (i % 2 ? "a/" : "b/") + std::to_string(i);
    CHECK(contents(path) == "file " + std::to_string(i));
    CHECK_FALSE(fs::exists(storage::temp_path_for(path)));
  }
}

TEST_CASE("a sync queue renames files in the order they were handed over (an index before its data file)") {
  test::TempDir dir("sync-queue");
  test::Calls calls;
  std::vector<std::string> order;
  {
    const storage::ScopedObserver observe(&calls);
    storage::SyncQueue queue(8);
    for (int i = 0; i < 200; ++i) {
      const std::string path = dir / std::to_string(i);
      order.push_back(path);
      queue.commit(written(storage::temp_path_for(path), std::string(static_cast<std::size_t>(i * 97 % 5000), 'x')),
                   storage::temp_path_for(path), path);
    }
    queue.finish();
  }
  std::vector<std::uint64_t> renamed;
  for (const auto& ev : calls.events)
    if (ev.op == storage::Op::rename) renamed.push_back(ev.file);
  REQUIRE(renamed.size() == order.size());
  for (std::size_t i = 0; i < order.size(); ++i) CHECK(renamed[i] == storage::path_hash(order[i]));
}

TEST_CASE("a new file committed through a sync queue takes its name only once synced") {
  test::TempDir dir("sync-queue");
  const std::string path = dir / "data.npz";
  test::Calls calls;
  {
    const storage::ScopedObserver observe(&calls);
    storage::SyncQueue queue(2);
    {
      storage::NewFile out(path, {.sync = &queue});
      out.write_at("hello", 5, 0);
      out.commit();
    }
    // A library wrote this one by name and closed it: the queue opens it again to sync it.
    const std::string by_library = dir / "data.h5";
    {
      storage::NewFile out(by_library, {.opened_by_library = true, .sync = &queue});
      std::ofstream(out.local_path()) << "hdf5";
      out.commit();
    }
    queue.finish();
    CHECK(contents(by_library) == "hdf5");
  }
  CHECK(contents(path) == "hello");
  // When the first is published beside the second's writing is the threads' timing: count.
  CHECK(calls.count(storage::Op::open) == 2);
  CHECK(calls.count(storage::Op::fsync) == 2 + 1);  // the files, then their folder
  CHECK(calls.count(storage::Op::close) == 2);
  CHECK(calls.count(storage::Op::rename) == 2);
  CHECK(calls.sequence().ends_with("close rename fsync"));
}

TEST_CASE("a sync queue dropped without finish publishes what it synced and leaves no temporary") {
  test::TempDir dir("sync-queue");
  {
    storage::SyncQueue queue(3);
    for (int i = 0; i < 30; ++i) {
      const std::string path = dir / std::to_string(i);
      queue.commit(written(storage::temp_path_for(path), "x"), storage::temp_path_for(path), path);
    }
  }
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    CHECK(name.find(std::string(storage::kTempSuffix)) == std::string::npos);
    CHECK(contents(entry.path().string()) == "x");
  }
}

TEST_CASE("a file whose sync fails is named in the error and removed") {
  test::TempDir dir("sync-queue");
  // fdatasync of a FIFO fails (EINVAL): a stand-in for a disk that reports an I/O error.
  const std::string fifo = dir / ".fifo.trainio-tmp";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  storage::SyncQueue queue(1);
  queue.commit(storage::File::open(fifo), fifo, dir / "fifo");
  try {
    queue.finish();
    FAIL("finish() did not report the failed sync");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::io);
    CHECK_THAT(std::string(e.what()), Catch::Contains("fdatasync") && Catch::Contains(fifo));
  }
  CHECK_FALSE(fs::exists(fifo));
  CHECK_FALSE(fs::exists(dir / "fifo"));
}
