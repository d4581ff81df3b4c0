#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <sys/time.h>

#include <ctime>
#include <thread>
#include <sstream>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "config/load.hpp"
#include "engine/content.hpp"
#include "engine/generate/generator.hpp"
#include "format/hdf5/hdf5_file.hpp"
#include "plan/layout.hpp"
#include "storage/io_observer.hpp"
#include "unit/temp_dir.hpp"

using namespace trainio;

namespace {

// The storage calls a write made, as strace would list them (call, offset, bytes).
class Calls : public storage::IoObserver {
 public:
  struct Call {
    storage::Op op;
    std::uint64_t offset, bytes;
    bool operator==(const Call&) const = default;
  };
  void on_op(const storage::OpEvent& e) override { calls.push_back({e.op, e.offset, e.bytes}); }
  std::vector<Call> calls;
};

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Object header times are whole seconds: files are compared when written within one. A retry
// starts as a second begins, so that even a slow (sanitizer) build has the whole second.
std::time_t a_fresh_second(int attempt) {
  const std::time_t now = std::time(nullptr);
  if (attempt == 0) return now;
  while (std::time(nullptr) == now) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return std::time(nullptr);
}

// The wall-clock second as both time() and gettimeofday() tell it, or -1 while they disagree
// (time() lags gettimeofday() by a few ms at a tick). libhdf5 stamps object headers from one of
// them: files written between two equal readings carry the same stamps.
std::time_t both_clocks_second() {
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  const std::time_t t = std::time(nullptr);
  return t == tv.tv_sec ? t : -1;
}

using Written = std::vector<Calls::Call>;

// Writes file `index` of the workload with `writer` to `path`, with that file's own content;
// returns the storage calls it made.
Written write(format::Hdf5Writer& writer, const config::Workload& w, std::uint64_t index, const std::string& path) {
  plan::DataFile f = plan::DatasetLayout(w).file(plan::Split::train, index);
  f.path = path;
  engine::RandomContent content(1000 + index);
  Calls calls;
  {
    storage::ScopedObserver observe(&calls);
    engine::write_data_file(writer, f, content);
  }
  return calls.calls;
}

// libhdf5's calls with H5Fcreate's lstat where strace shows it: after the lock.
std::vector<Calls::Call> with_create_lstat(std::vector<Calls::Call> calls) {
  for (auto it = calls.begin(); it != calls.end(); ++it)
    if (it->op == storage::Op::fcntl) {
      calls.insert(it + 1, {storage::Op::stat, 0, 0});
      break;
    }
  return calls;
}

config::Workload workload(const test::TempDir& dir, std::vector<std::string> overrides) {
  overrides.insert(overrides.end(), {"dataset.format=hdf5", "dataset.num_files_train=4", "dataset.num_files_eval=0",
                                     "dataset.num_subfolders_train=0", "workflow.evaluation=false",
                                     "dataset.record_length_bytes_stdev=0", std::string("dataset.data_folder=").append(dir.path())});
  return config::load("default", overrides);
}

}  // namespace

TEST_CASE("HDF5 writer: the next files of a layout replay libhdf5's calls, and are the files libhdf5 writes", "[hdf5]") {
  const auto overrides = GENERATE(std::vector<std::string>{"dataset.num_samples_per_file=8", "dataset.record_length_bytes=131072"},
                                  std::vector<std::string>{"dataset.num_samples_per_file=3", "dataset.record_length_bytes=1000"},
                                  std::vector<std::string>{"dataset.num_samples_per_file=4", "dataset.record_length_bytes=65536",
                                                           "dataset.hdf5.num_dset_per_record=2", "dataset.record_element_type=float16"},
                                  std::vector<std::string>{"dataset.num_samples_per_file=2", "dataset.record_length_bytes=9437184"});
  test::TempDir dir("hdf5-write-template");
  const config::Workload w = workload(dir, overrides);
  for (int attempt = 0;; ++attempt) {
    REQUIRE(attempt < 10);
    format::Hdf5Writer replaying{format::Hdf5Settings(w)}, through_libhdf5{format::Hdf5Settings(w)};
    const std::time_t second = a_fresh_second(attempt);
    if (both_clocks_second() != second) continue;
    const Written first = write(replaying, w, 0, dir / fmt::format("a{}.hdf5", attempt));
    const Written replayed = write(replaying, w, 1, dir / fmt::format("b{}.hdf5", attempt));
    const Written reference = write(through_libhdf5, w, 1, dir / fmt::format("c{}.hdf5", attempt));
    if (both_clocks_second() != second || replaying.files_replayed() != 1) continue;
    // Byte for byte libhdf5's file.
    CHECK(bytes_of(dir / fmt::format("b{}.hdf5", attempt)) == bytes_of(dir / fmt::format("c{}.hdf5", attempt)));
    // Through the same storage calls. H5Fcreate's lstat of the path, once the file is open and
    // locked, is libhdf5's own call, which the storage layer does not see; the replay makes it
    // through storage (tests/e2e/test_formats.py compares the two under strace).
    CHECK(replayed == with_create_lstat(reference));
    CHECK(first == reference);
    CHECK(format::validate_hdf5(format::Hdf5Settings(w), [&] {
            plan::DataFile f = plan::DatasetLayout(w).file(plan::Split::train, 1);
            f.path = dir / fmt::format("b{}.hdf5", attempt);
            return f;
          }()) == std::nullopt);
    break;
  }
}

TEST_CASE("HDF5 writer: chunked and compressed files are always written through libhdf5", "[hdf5]") {
  const auto overrides = GENERATE(std::vector<std::string>{"dataset.hdf5.chunk_dims=[1,32,32]"},
                                  std::vector<std::string>{"dataset.compression=gzip"});
  test::TempDir dir("hdf5-write-template");
  auto all = overrides;
  all.insert(all.end(), {"dataset.num_samples_per_file=4", "dataset.record_length_bytes=4096"});
  const config::Workload w = workload(dir, all);
  format::Hdf5Writer writer{format::Hdf5Settings(w)};
  for (std::uint64_t i = 0; i < 4; ++i) write(writer, w, i, dir / fmt::format("f{}.hdf5", i));
  CHECK(writer.files_replayed() == 0);
}

TEST_CASE("HDF5 writer: a file of another layout is written through libhdf5, and makes the template", "[hdf5]") {
  test::TempDir dir("hdf5-write-template");
  const config::Workload small = workload(dir, {"dataset.num_samples_per_file=2", "dataset.record_length_bytes=4096"});
  const config::Workload large = workload(dir, {"dataset.num_samples_per_file=5", "dataset.record_length_bytes=4096"});
  for (int attempt = 0;; ++attempt) {
    REQUIRE(attempt < 10);
    format::Hdf5Writer writer{format::Hdf5Settings(small)};
    const std::time_t second = a_fresh_second(attempt);
    write(writer, small, 0, dir / fmt::format("s0-{}.hdf5", attempt));
    write(writer, large, 1, dir / fmt::format("l1-{}.hdf5", attempt));  // another shape: libhdf5
    write(writer, small, 2, dir / fmt::format("s2-{}.hdf5", attempt));  // the last template was large's: libhdf5
    const std::uint64_t before = writer.files_replayed();
    write(writer, small, 3, dir / fmt::format("s3-{}.hdf5", attempt));  // replayed
    // Near a tick time() and gettimeofday() may disagree for a few ms: the writer then replays
    // nothing (its files' times would be in doubt), and the test tries again.
    if (std::time(nullptr) != second || writer.files_replayed() != 1) continue;
    CHECK(before == 0);
    plan::DataFile f = plan::DatasetLayout(small).file(plan::Split::train, 3);
    f.path = dir / fmt::format("s3-{}.hdf5", attempt);
    CHECK(format::validate_hdf5(format::Hdf5Settings(small), f) == std::nullopt);
    break;
  }
}
