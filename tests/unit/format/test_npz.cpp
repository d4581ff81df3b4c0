#include <catch2/catch.hpp>

#include <unistd.h>

#include <vector>

#include "config/load.hpp"
#include "engine/generate/generator.hpp"
#include "format/numpy/npy.hpp"
#include "format/numpy/npz.hpp"
#include "format/python_io.hpp"
#include "metrics/io_recorder.hpp"
#include "plan/layout.hpp"
#include "storage/file.hpp"
#include "unit/temp_dir.hpp"
#include "util/error.hpp"
#include "unit/format/random_content.hpp"
#include "util/rng.hpp"

using namespace trainio;

namespace {

// Reads sample `sample` of the `samples`-sample file at `path` (file number 0).
std::uint64_t read_sample(format::SampleReader& reader, const std::string& path, const plan::SampleShape& shape,
                          std::uint64_t samples, std::uint64_t sample) {
  return reader.read({&path, shape, samples, sample, 0});
}

// The content of the files these tests write.
class Content : public test::RandomContent {
 public:
  Content() : RandomContent(1) {}
};

// Records the sequence of storage calls, as strace would list them.
class Trace : public storage::IoObserver {
 public:
  void on_op(const storage::OpEvent& e) override { calls.emplace_back(e.op, e.bytes); }
  std::vector<std::pair<storage::Op, std::uint64_t>> calls;
  std::vector<std::uint64_t> reads() const {
    std::vector<std::uint64_t> r;
    for (const auto& [op, bytes] : calls)
      if (op == storage::Op::read) r.push_back(bytes);
    return r;
  }
  int count(storage::Op op) const {
    int n = 0;
    for (const auto& c : calls) n += c.first == op;
    return n;
  }
};

plan::DataFile npz_file(const std::string& path, std::uint64_t side, std::uint64_t samples) {
  plan::DataFile f;
  f.path = path;
  f.sample.push(side);
  f.sample.push(side);
  f.num_samples = samples;
  return f;
}

std::uint64_t write(const plan::DataFile& f, int deflate_level = -1) {
  format::NpzWriter writer(deflate_level);
  Content content;
  engine::write_data_file(writer, f, content);
  return storage::File::open(f.path).size();
}

std::string fmt_name(std::uint64_t side, std::uint64_t samples) {
  std::string name = "f";
  name += std::to_string(side);
  name += "_";
  name += std::to_string(samples);
  return name + ".npz";
}

}  // namespace

TEST_CASE("the NPZ writer's size is known in advance") {
  test::TempDir dir("npz-size");
  for (std::uint64_t side : {1u, 64u, 300u}) {
    for (std::uint64_t samples : {1u, 5u}) {
      const auto f = npz_file(dir / fmt_name(side, samples), side, samples);
      const auto written = write(f);
      CHECK(written == *format::NpzWriter().expected_size(f));
      storage::File in = storage::File::open(f.path);
      CHECK(in.size() == written);
    }
  }
}

TEST_CASE("one NPZ writer writes files of changing shapes at their own sizes") {
  test::TempDir dir("npz-shapes");
  format::NpzWriter writer;
  int n = 0;
  for (const std::uint64_t side : {64u, 1u, 64u, 300u}) {
    const auto f = npz_file(dir / (std::to_string(n++) + fmt_name(side, 3)), side, 3);
    Content content;
    engine::write_data_file(writer, f, content);
    CHECK(storage::File::open(f.path).size() == *format::NpzWriter().expected_size(f));
    CHECK(format::validate_npz(f) == std::nullopt);
  }
}

TEST_CASE("a small NPZ file reaches storage in one write; a large one has its header patched after") {
  test::TempDir dir("npz-writes");
  for (const int level : {-1, 6}) {
    for (const auto& [side, writes] : {std::pair<std::uint64_t, int>{16, 1}, {1200, 3}}) {
      // 4 samples of 16x16 bytes fit the writer's 4 MiB buffer; of 1200x1200 (5.8 MB) take two buffers.
      const auto f = npz_file(dir / (std::to_string(level) + fmt_name(side, 4)), side, 4);
      Trace trace;
      {
        const storage::ScopedObserver observe(&trace);
        write(f, level);
      }
      INFO("deflate level " << level << ", side " << side);
      CHECK(trace.count(storage::Op::write) == (level < 0 || side == 16 ? writes : writes + 1));
      // Written in one call, a file goes under its final name; otherwise under a temporary
      // name, renamed once complete (a file cut short never carries the dataset's name).
      const bool one_call = level < 0 && side == 16;
      CHECK(format::NpzWriter(level).writes_in_one_call(f) == one_call);
      CHECK(trace.count(storage::Op::rename) == (one_call ? 0 : 1));
      // The bytes are a valid archive either way: the reader takes them.
      if (level < 0) {
        format::NpzReader reader;
        plan::SampleShape shape;
        shape.push(side);
        shape.push(side);
        CHECK(read_sample(reader, f.path, shape, 4, 3) == side * side);
      }
    }
  }
}

TEST_CASE("np.load(path)['x'] is replayed call for call (4 KiB Python buffer)") {
  test::TempDir dir("npz-read");
  const auto f = npz_file(dir / "one.npz", 1024, 1);  // 1 MiB of data, as in the strace study
  const auto size = write(f);
  Trace trace;
  storage::ScopedObserver observe(&trace);
  format::NpzReader reader(4096);
  const auto got = read_sample(reader, f.path, f.sample, 1, 0);
  CHECK(got == 1048576);
  // numpy 1.24 / CPython 3.11 on a file system with 4 KiB blocks: the sniff, the end record
  // (read(23) + read(1) from readall), the zip64 probe, the central directory, two member
  // opens, then 256 KiB chunks: whole blocks read directly plus one refill each.
  const std::vector<std::uint64_t> expected_reads = {4096,   22,   0,      42,   124,    4096, 4096, 4096, 4096,
                                                     253952, 4096, 258048, 4096, 258048, 4096, 258048, size - 1048576};
  CHECK(trace.reads() == expected_reads);
  CHECK(trace.count(storage::Op::open) == 1);
  CHECK(trace.count(storage::Op::stat) == 2);
  CHECK(trace.count(storage::Op::ioctl) == 1);
  CHECK(trace.count(storage::Op::seek) == 21);
  CHECK(trace.count(storage::Op::close) == 1);
}

TEST_CASE("the NPZ reader checks what it reads against the workload") {
  test::TempDir dir("npz-bad");
  const auto f = npz_file(dir / "a.npz", 64, 2);
  write(f);
  format::NpzReader reader;
  CHECK(read_sample(reader, f.path, f.sample, 2, 1) == 64 * 64);  // the sample, out of the 2-sample array

  SECTION("another shape") {
    plan::SampleShape other;
    other.push(32);
    other.push(32);
    CHECK_THROWS_WITH(read_sample(reader, f.path, other, 2, 0), Catch::Contains("different shape"));
  }
  SECTION("a truncated file") {
    REQUIRE(::truncate(f.path.c_str(), 3000) == 0);
    try {
      read_sample(reader, f.path, f.sample, 2, 0);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::data);
      CHECK(std::string(e.what()).find(f.path) != std::string::npos);
    }
  }
  SECTION("not a zip") {
    storage::File junk = storage::File::open(dir / "junk.npz", {.access = storage::Access::write_new});
    junk.pwrite_all("hello, this is not an archive at all....", 40, 0);
    junk.close();
    CHECK_THROWS_WITH(read_sample(reader, dir / "junk.npz", f.sample, 2, 0), Catch::Contains("not a valid NPZ"));
  }
  SECTION("a missing file") {
    try {
      read_sample(reader, dir / "missing.npz", f.sample, 2, 0);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::io);
      CHECK(std::string(e.what()).find("missing.npz") != std::string::npos);
      CHECK(std::string(e.what()).find("No such file") != std::string::npos);
    }
  }
}

TEST_CASE("Python's buffered reader: seeks inside the buffer cost no call, tell() always one") {
  test::TempDir dir("pyio");
  {
    storage::File out = storage::File::open(dir / "data", {.access = storage::Access::write_new});
    std::vector<char> bytes(20000, 'a');
    out.pwrite_all(bytes.data(), bytes.size(), 0);
    out.close();
  }
  Trace trace;
  storage::ScopedObserver observe(&trace);
  format::PyBufferedFile file(4096);
  file.open(dir / "data");
  char buf[16384];
  CHECK(file.read(buf, 10) == 10);       // fills the 4 KiB buffer
  CHECK(file.seek(-10, SEEK_CUR) == 0);  // inside the buffer: free
  CHECK(file.seek(100, SEEK_SET) == 100);
  CHECK(file.tell() == 100);             // an lseek
  CHECK(file.read(buf, 9000) == 9000);   // 3996 buffered + 4096 direct + refill 4096
  CHECK(file.seek(0, SEEK_END) == 20000);
  const std::vector<std::uint64_t> expected = {4096, 4096, 4096};
  CHECK(trace.reads() == expected);
  CHECK(trace.count(storage::Op::seek) == 3);  // open's tell, tell(), SEEK_END
  file.close();
}

TEST_CASE("NPZ sizes stay exact past 4 GiB and 2^32 samples (64-bit layout, zip64 records)") {
  // Computed, not written: 2^32 + 3 samples of 2x2 bytes (16 GiB of x, 32 GiB of labels).
  const std::uint64_t samples = (1ULL << 32) + 3;
  const auto f = npz_file("never-written.npz", 2, samples);
  const std::uint64_t x_data = 4 * samples, y_data = 8 * samples;
  const std::uint64_t dims[] = {2, 2, samples}, labels[] = {samples};
  const std::uint64_t x_header = format::npy::header(config::ElementType::uint8, dims).size();
  const std::uint64_t y_header = format::npy::header(config::ElementType::int64, labels).size();
  const std::uint64_t local = 30 + 5 + 20;  // fixed part, "x.npy"/"y.npy", numpy's forced zip64 extra
  // Central entries: x (sizes past zipfile's limit: a 16-byte zip64 extra), y (sizes and offset: 24).
  const std::uint64_t central = (46 + 5 + 4 + 16) + (46 + 5 + 4 + 24);
  const std::uint64_t end = 56 + 20 + 22;  // zip64 end record, locator, end record
  CHECK(*format::NpzWriter().expected_size(f) == local + x_header + x_data + local + y_header + y_data + central + end);
}

TEST_CASE("Python's read() into a buffer smaller than what is left reports only the bytes it copied") {
  test::TempDir dir("pyio-readall");
  {
    storage::File out = storage::File::open(dir / "data", {.access = storage::Access::write_new});
    std::vector<char> bytes(10000);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 251);
    out.pwrite_all(bytes.data(), bytes.size(), 0);
    out.close();
  }
  format::PyBufferedFile file(4096);
  file.open(dir / "data");
  char head[10];
  REQUIRE(file.read(head, sizeof head) == sizeof head);  // 4086 bytes stay buffered
  std::vector<char> small(100, '\x7f');
  CHECK(file.read_all(small.data(), small.size()) == small.size());
  for (std::size_t i = 0; i < small.size(); ++i) CHECK(small[i] == static_cast<char>((10 + i) % 251));
  file.close();
}
