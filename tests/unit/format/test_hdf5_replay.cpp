#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "engine/generate/generator.hpp"
#include "config/load.hpp"
#include "format/hdf5/hdf5_api.hpp"
#include "format/hdf5/hdf5_file.hpp"
#include "format/hdf5/hdf5_replay.hpp"
#include "plan/layout.hpp"
#include "storage/hdf5_vfd.hpp"
#include "storage/io_observer.hpp"
#include "unit/temp_dir.hpp"
#include "util/page_aligned.hpp"
#include "unit/format/random_content.hpp"
#include "util/rng.hpp"

using namespace trainio;
using format::Hdf5Replay;
using Kind = Hdf5Replay::Step::Kind;

namespace {

// The content of the files these tests write.
class Content : public test::RandomContent {
 public:
  Content() : RandomContent(7) {}
};

// The reads the storage layer saw (offset, bytes), as strace would list the preads.
class Reads : public storage::IoObserver {
 public:
  void on_op(const storage::OpEvent& e) override {
    if (e.op == storage::Op::read) reads.push_back({e.offset, e.bytes});
    ops.push_back(e.op);
  }
  std::vector<Hdf5Replay::Read> reads;
  std::vector<storage::Op> ops;
};

struct Dataset {
  config::Workload w;
  std::vector<plan::DataFile> files;
  format::Hdf5Layout layout;
};

// Two files; `pause` between writing them (object header times are in whole seconds).
Dataset make(const test::TempDir& dir, std::vector<std::string> overrides,
             std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
  overrides.insert(overrides.end(), {"dataset.format=hdf5", "dataset.num_files_train=2", "dataset.num_files_eval=0",
                                     "dataset.num_subfolders_train=0", "workflow.evaluation=false",
                                     "dataset.data_folder=" + dir.path()});
  Dataset d{config::load("default", overrides), {}, {}};
  const plan::DatasetLayout layout(d.w);
  format::Hdf5Writer writer{format::Hdf5Settings(d.w)};
  for (std::uint64_t i = 0; i < 2; ++i) {
    if (i > 0) std::this_thread::sleep_for(pause);
    plan::DataFile f = layout.file(plan::Split::train, i);
    f.path = dir / fmt::format("f{}.hdf5", i);
    Content content;
    engine::write_data_file(writer, f, content);
    d.files.push_back(f);
  }
  d.layout = format::hdf5_layout(d.w, d.files[0]);
  return d;
}

// libhdf5 reading one sample, as the reader does, with the driver recording.
storage::DriverRecording record(const Dataset& d, const std::string& path, std::uint64_t sample) {
  std::lock_guard lock(storage::hdf5_lock());
  storage::DriverRecording r;
  util::Bytes buffer(d.layout.sample_bytes_per_dataset());
  storage::record_driver_calls(&r);
  {
    format::h5::Id fapl(storage::trainio_fapl(), H5Pclose, "H5Pcreate", path);
    format::h5::Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose, "H5Fopen", path);
    format::hdf5_read_sample(file, path, d.layout, sample, buffer.data());
    file.close("H5Fclose", path);
  }
  storage::record_driver_calls(nullptr);
  return r;
}

format::Hdf5ReplayShape shape_of(const Dataset& d) {
  return {d.layout.shape[0], d.layout.sample_bytes_per_dataset(), d.layout.datasets};
}

// The reads libhdf5 made, in order.
std::vector<Hdf5Replay::Read> reads_of(const storage::DriverRecording& r) {
  std::vector<Hdf5Replay::Read> out;
  for (const auto& c : r.calls)
    if (c.kind == storage::DriverCall::Kind::read) out.push_back({c.offset, c.size});
  return out;
}

// The reads the template predicts for `sample`.
std::vector<Hdf5Replay::Read> predicted(const Hdf5Replay& t, std::uint64_t sample) {
  std::vector<Hdf5Replay::Read> out;
  for (const auto& s : t.steps()) {
    if (s.kind == Kind::metadata) out.push_back({s.offset, s.size});
    if (s.kind == Kind::data) out.push_back(t.data_read(s.dataset, sample));
  }
  return out;
}

std::size_t metadata_size(const Hdf5Replay& t) {
  std::size_t n = 0;
  for (const auto& s : t.steps())
    if (s.kind == Kind::metadata) n += s.size;
  return n;
}

// Whether every metadata read of `actual` returned exactly the bytes `t` recorded.
bool same_metadata(const Hdf5Replay& t, const storage::DriverRecording& actual) {
  std::size_t at = 0;
  for (const auto& s : t.steps()) {
    if (s.kind != Kind::metadata) continue;
    const auto bytes = t.metadata(s);
    if (at + s.size > actual.metadata.size() ||
        !std::equal(bytes.begin(), bytes.end(), actual.metadata.begin() + static_cast<std::ptrdiff_t>(at)))
      return false;
    at += s.size;
  }
  return at == actual.metadata.size();
}

// Whether the replay of `t` accepts sample `sample` of `path`: its metadata agree (times aside).
bool replays(const Hdf5Replay& t, const std::string& path, std::uint64_t sample) {
  storage::File file;
  std::vector<unsigned char> scratch;
  util::Bytes data(std::max<std::uint64_t>(t.data_bytes(), t.shape().sieve_bytes));
  return Hdf5Replay::run({&t, 1}, file, path, sample, Hdf5Replay::Part::open_read_close, scratch, data.data()) ==
         std::optional<std::size_t>(0);
}

}  // namespace

TEST_CASE("HDF5 replay: one recorded sample predicts libhdf5's reads for every sample of every file", "[hdf5]") {
  const std::vector<std::vector<std::string>> cases = {
      {"dataset.record_length_bytes=20000", "dataset.num_samples_per_file=5"},    // below the sieve buffer
      {"dataset.record_length_bytes=200000", "dataset.num_samples_per_file=4"},   // read directly
      {"dataset.record_length_bytes=4096", "dataset.num_samples_per_file=3"},     // whole dataset in one sieve fill
      {"dataset.record_dims=[4,64,64]", "dataset.hdf5.num_dset_per_record=2", "dataset.num_samples_per_file=5"},
  };
  for (const auto& overrides : cases) {
    test::TempDir dir("hdf5-replay");
    const Dataset d = make(dir, overrides);
    const std::uint64_t n = d.layout.shape[0];
    const auto learned = Hdf5Replay::learn(record(d, d.files[0].path, 1), shape_of(d), 1);
    REQUIRE(learned);
    for (const auto& f : d.files) {
      for (std::uint64_t k = 0; k < n; ++k) {
        INFO(overrides[0] << " file " << f.path << " sample " << k);
        const auto actual = record(d, f.path, k);
        CHECK(predicted(*learned, k) == reads_of(actual));
        CHECK(metadata_size(*learned) == actual.metadata.size());
        CHECK(replays(*learned, f.path, k));  // libhdf5 decided the same from the bytes it read
        if (f.path == d.files[0].path) CHECK(same_metadata(*learned, actual));  // the file it was learned from
      }
    }
  }
}

TEST_CASE("HDF5 replay: files written seconds apart differ in object header times only, and are replayed", "[hdf5]") {
  test::TempDir dir("hdf5-replay-times");
  const Dataset d = make(dir, {"dataset.record_length_bytes=200000", "dataset.num_samples_per_file=2"},
                         std::chrono::milliseconds(1100));
  const auto learned = Hdf5Replay::learn(record(d, d.files[0].path, 0), shape_of(d), 0);
  REQUIRE(learned);
  for (std::uint64_t k = 0; k < 2; ++k) {
    const auto actual = record(d, d.files[1].path, k);
    CHECK(predicted(*learned, k) == reads_of(actual));
    if (same_metadata(*learned, actual)) WARN("libhdf5 wrote no object header times: the times went untested");
    CHECK(replays(*learned, d.files[1].path, k));
  }
}

TEST_CASE("HDF5 replay: run() issues libhdf5's calls through the storage layer, and stops where a file differs", "[hdf5]") {
  test::TempDir dir("hdf5-replay-run");
  const Dataset d = make(dir, {"dataset.record_length_bytes=20000", "dataset.num_samples_per_file=5"});
  const auto t = Hdf5Replay::learn(record(d, d.files[0].path, 0), shape_of(d), 0);
  REQUIRE(t);
  const auto libhdf5 = reads_of(record(d, d.files[1].path, 4));

  Reads seen;
  storage::set_thread_observer(&seen);
  std::vector<unsigned char> scratch;
  util::Bytes data(64 * 1024);
  storage::File file;
  CHECK(Hdf5Replay::run({&*t, 1}, file, d.files[1].path, 4, Hdf5Replay::Part::open_read_close, scratch,
                        data.data()) == std::optional<std::size_t>(0));
  CHECK_FALSE(file.is_open());
  CHECK(seen.reads == libhdf5);
  // open, fstat, the superblock reads, H5Fopen's lstat of the path, then the object headers.
  REQUIRE(seen.ops.size() >= 6);
  CHECK(seen.ops[0] == storage::Op::open);
  CHECK(seen.ops[1] == storage::Op::stat);
  CHECK(seen.ops.back() == storage::Op::close);

  // A file whose object header differs in one byte: the replay stops at that read.
  const std::string other = dir / "changed.hdf5";
  std::filesystem::copy_file(d.files[1].path, other);
  {
    std::fstream f(other, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);  // inside an object header
    f.put('\x7f');
  }
  seen.reads.clear();
  storage::File changed;
  CHECK_FALSE(Hdf5Replay::run({&*t, 1}, changed, other, 0, Hdf5Replay::Part::open_read_close, scratch, data.data()));
  CHECK(changed.is_open());
  // What was issued is a prefix of libhdf5's reads, ending before the data.
  const auto expected = predicted(*t, 0);
  REQUIRE(seen.reads.size() < expected.size());
  for (std::size_t i = 0; i < seen.reads.size(); ++i) CHECK(seen.reads[i] == expected[i]);
  CHECK(seen.reads.back().offset <= 200);  // the read that met the changed byte was the last
  CHECK(seen.reads.back().offset + seen.reads.back().size > 200);
  storage::set_thread_observer(nullptr);
}

TEST_CASE("HDF5 replay: chunked datasets are not replayed", "[hdf5]") {
  test::TempDir dir("hdf5-replay-chunked");
  const Dataset d = make(dir, {"dataset.record_dims=[64,64]", "dataset.hdf5.chunk_dims=[2,32,64]",
                               "dataset.num_samples_per_file=4"});
  CHECK_FALSE(Hdf5Replay::learn(record(d, d.files[0].path, 1), shape_of(d), 1));
}

TEST_CASE("HDF5 replay: of several recorded layouts of one file shape, the one the file's bytes agree with is replayed",
          "[hdf5]") {
  // 4000 bytes per sample, 3 samples per file, stored as (3, 4000) and as (3, 40, 100).
  test::TempDir flat_dir("hdf5-replay-flat"), square_dir("hdf5-replay-square");
  const Dataset flat = make(flat_dir, {"dataset.record_dims=[4000]", "dataset.num_samples_per_file=3"});
  const Dataset square = make(square_dir, {"dataset.record_dims=[40,100]", "dataset.num_samples_per_file=3"});
  REQUIRE(shape_of(flat).sample_bytes == shape_of(square).sample_bytes);
  std::vector<Hdf5Replay> known;
  known.push_back(*Hdf5Replay::learn(record(flat, flat.files[0].path, 0), shape_of(flat), 0));
  std::vector<unsigned char> scratch;
  util::Bytes data(64 * 1024);
  storage::File file;
  CHECK_FALSE(Hdf5Replay::run(known, file, square.files[1].path, 2, Hdf5Replay::Part::open_read_close, scratch,
                              data.data()));
  file.close();
  known.push_back(*Hdf5Replay::learn(record(square, square.files[0].path, 0), shape_of(square), 0));
  for (const auto& [d, expected] : {std::pair{&flat, 0}, std::pair{&square, 1}}) {
    const auto libhdf5 = reads_of(record(*d, d->files[1].path, 2));
    Reads seen;
    std::optional<std::size_t> chosen;
    {
      storage::ScopedObserver observe(&seen);
      chosen = Hdf5Replay::run(known, file, d->files[1].path, 2, Hdf5Replay::Part::open_read_close, scratch, data.data());
    }
    CHECK(chosen == std::optional<std::size_t>(expected));
    CHECK(seen.reads == libhdf5);
  }
}

TEST_CASE("HDF5 replay: files written at different times (object header times differ) replay alike", "[hdf5]") {
  test::TempDir early_dir("hdf5-replay-early"), late_dir("hdf5-replay-late");
  const std::vector<std::string> overrides = {"dataset.record_length_bytes=100000", "dataset.num_samples_per_file=2"};
  const Dataset early = make(early_dir, overrides);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // HDF5 stores times in seconds
  const Dataset late = make(late_dir, overrides);
  auto head = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes(2048, '\0');
    in.read(bytes.data(), 2048);
    return bytes;
  };
  REQUIRE(head(early.files[0].path) != head(late.files[0].path));  // the times differ
  const auto t = Hdf5Replay::learn(record(early, early.files[0].path, 0), shape_of(early), 0);
  REQUIRE(t);
  const auto libhdf5 = reads_of(record(late, late.files[1].path, 1));
  Reads seen;
  std::vector<unsigned char> scratch;
  util::Bytes data(t->data_bytes());
  storage::File file;
  std::optional<std::size_t> chosen;
  {
    storage::ScopedObserver observe(&seen);
    chosen = Hdf5Replay::run({&*t, 1}, file, late.files[1].path, 1, Hdf5Replay::Part::open_read_close, scratch,
                             data.data());
  }
  CHECK(chosen == std::optional<std::size_t>(0));
  CHECK(seen.reads == libhdf5);
}

TEST_CASE("HDF5 reader: chunked files' recordings hold a bounded number of sample slots per thread", "[hdf5]") {
  // Every file a shape of its own (as with record_length_bytes_stdev), each of many samples: the
  // slots of their templates would grow with the files; past the bound, samples are read
  // through libhdf5 instead, and still read whole.
  using Reader = format::Hdf5Reader;
  test::TempDir dir("hdf5-bounds");
  const std::uint64_t per_file = 60000;  // 5 files need more than Reader::kMaxIndexedSlots
  REQUIRE(5 * per_file > Reader::kMaxIndexedSlots);
  REQUIRE(4 * (per_file + 4) <= Reader::kMaxIndexedSlots);
  std::unique_ptr<Reader> reader;
  for (std::uint64_t n = 0; n < 5; ++n) {
    const config::Workload w = config::load(
        "default", {"dataset.format=hdf5", "dataset.num_files_train=1", "dataset.num_files_eval=0",
                    "dataset.num_subfolders_train=0", "workflow.evaluation=false", "dataset.record_dims=[8,8]",
                    "dataset.hdf5.chunk_dims=[100,8,8]", "dataset.num_samples_per_file=" + std::to_string(per_file + n),
                    "dataset.data_folder=" + dir.path()});
    if (!reader) reader = std::make_unique<Reader>(format::Hdf5Settings(w), false, 1);
    const plan::DatasetLayout layout(w);
    plan::DataFile f = layout.file(plan::Split::train, 0);
    f.path = dir / fmt::format("f{}.hdf5", n);
    format::Hdf5Writer writer{format::Hdf5Settings(w)};
    Content content;
    engine::write_data_file(writer, f, content);
    for (const std::uint64_t sample : {std::uint64_t{0}, per_file - 1}) {
      const format::SampleRequest r{&f.path, f.sample, f.num_samples, sample, n};
      CHECK(reader->read(r) == f.sample.bytes());
    }
    CHECK(reader->indexed_slots() <= Reader::kMaxIndexedSlots);
  }
  CHECK(reader->templates_held() == 5);
  CHECK(reader->indexed_slots() == 4 * per_file + 0 + 1 + 2 + 3);  // the fifth file's slots were refused
}
