#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "storage/aligned_buffer.hpp"
#include "storage/file.hpp"
#include "storage/read_engine.hpp"
#include "unit/storage/observed_calls.hpp"
#include "unit/temp_dir.hpp"
#include "util/error.hpp"

using namespace trainio;
using storage::EngineKind;
using storage::Op;
using storage::SampleRead;

namespace {

// Sample i of every file lies at i × size after a header; records the file sizes it was given.
struct FixedRecords : storage::Locator {
  std::span<SampleRead> reads;
  std::vector<std::uint64_t> samples;  // which sample each read is
  std::uint64_t header = 0, size = 0;
  bool wants_size = false;
  std::vector<std::uint64_t> sizes_seen;
  bool needs_file_size() const override { return wants_size; }
  void locate(std::size_t i, std::uint64_t file_size) override {
    sizes_seen.push_back(file_size);
    reads[i].offset = header + samples[i] * size;
    reads[i].length = size;
  }
};

struct Dataset {
  test::TempDir dir{"engine"};
  std::vector<std::string> paths;
  explicit Dataset(int files, std::size_t bytes = 1 << 16) {
    for (int f = 0; f < files; ++f) {
      paths.push_back(dir / ("f" + std::to_string(f) + ".bin"));
      test::write_text(paths.back(), test::pattern(bytes));
    }
  }
  // Reads sample `sample` of each listed file through `engine`.
  void read(storage::ReadEngine& engine, std::vector<int> files, std::uint64_t sample, FixedRecords& where) {
    std::vector<SampleRead> reads;
    for (int f : files) reads.push_back({.file = static_cast<std::uint64_t>(f), .path = &paths[f]});
    where.reads = reads;
    where.samples.assign(files.size(), sample);
    engine.read(reads, where);
  }
};

std::vector<std::uint64_t> read_offsets(const test::Calls& calls) {
  std::vector<std::uint64_t> out;
  for (const auto& e : calls.events)
    if (e.op == Op::read) out.push_back(e.offset);
  return out;
}

}  // namespace

TEST_CASE("the pread engine opens, reads the located bytes and closes, asking the size only when needed", "[storage]") {
  Dataset data(2);
  auto engine = storage::make_read_engine({.kind = EngineKind::posix});
  CHECK_FALSE(engine->overlaps_reads());
  FixedRecords where;
  where.header = 128;
  where.size = 4096;
  test::Calls calls;
  {
    const storage::ScopedObserver observe(&calls);
    data.read(*engine, {0, 1}, 3, where);
  }
  CHECK(calls.sequence() == "open read close open read close");
  CHECK(read_offsets(calls) == std::vector<std::uint64_t>{128 + 3 * 4096, 128 + 3 * 4096});
  CHECK(calls.bytes(Op::read) == 2 * 4096);
  CHECK(where.sizes_seen == std::vector<std::uint64_t>{0, 0});

  where.wants_size = true;
  where.sizes_seen.clear();
  calls.events.clear();
  {
    const storage::ScopedObserver observe(&calls);
    data.read(*engine, {1}, 0, where);
  }
  CHECK(calls.sequence() == "open stat read close");
  CHECK(where.sizes_seen == std::vector<std::uint64_t>{1 << 16});
}

TEST_CASE("with files kept open an engine opens each file once, and keeps at most its bound", "[storage]") {
  Dataset data(3);
  for (EngineKind kind : {EngineKind::posix, EngineKind::io_uring}) {
    auto engine = storage::make_read_engine({.kind = kind, .keep_open = true, .depth = 4});
    FixedRecords where;
    where.size = 1000;
    test::Calls calls;
    {
      const storage::ScopedObserver observe(&calls);
      for (std::uint64_t s = 0; s < 4; ++s) data.read(*engine, {0, 1, 2}, s, where);
    }
    CHECK(calls.count(Op::open) == 3);
    CHECK(calls.count(Op::read) == 12);
    CHECK(calls.count(Op::close) == 0);
  }
}

TEST_CASE("the io_uring engine keeps a batch's files open however many samples the batch has", "[storage]") {
  // A batch of more reads than the engine keeps files, all from 2 files: the files stay open
  // (read_type: memory), where each read once opened and closed its file.
  constexpr std::size_t kReads = storage::kMaxKeptFiles + 44;
  Dataset data(2, kReads * 64);
  auto engine = storage::make_read_engine({.kind = EngineKind::io_uring, .keep_open = true, .depth = 8});
  FixedRecords where;
  where.size = 64;
  std::vector<SampleRead> reads;
  for (std::size_t i = 0; i < kReads; ++i) {
    reads.push_back({.file = i % 2, .path = &data.paths[i % 2]});
    where.samples.push_back(i);
  }
  where.reads = reads;
  test::Calls calls;
  {
    const storage::ScopedObserver observe(&calls);
    engine->read(reads, where);
    engine->read(reads, where);
  }
  CHECK(calls.count(Op::open) == 2);
  CHECK(calls.count(Op::read) == 2 * kReads);
  CHECK(calls.count(Op::close) == 0);
}

TEST_CASE("a batch of more files than the engine keeps opens them for the batch and closes them", "[storage]") {
  // Keeping them would close files whose reads are still in flight.
  constexpr int kFiles = static_cast<int>(storage::kMaxKeptFiles) + 4;
  Dataset data(kFiles, 4096);
  auto engine = storage::make_read_engine({.kind = EngineKind::io_uring, .keep_open = true, .depth = 8});
  FixedRecords where;
  where.size = 4096;
  std::vector<int> files;
  for (int f = 0; f < kFiles; ++f) files.push_back(f);
  test::Calls calls;
  {
    const storage::ScopedObserver observe(&calls);
    data.read(*engine, files, 0, where);
  }
  CHECK(calls.count(Op::open) == kFiles);
  CHECK(calls.count(Op::read) == kFiles);
  CHECK(calls.count(Op::close) == kFiles);
}

TEST_CASE("a file that ends before its sample is a dataset error naming it, for every engine", "[storage]") {
  Dataset data(1, 5000);
  for (EngineKind kind : {EngineKind::posix, EngineKind::mmap, EngineKind::io_uring}) {
    auto engine = storage::make_read_engine({.kind = kind, .depth = 2});
    FixedRecords where;
    where.size = 4096;
    try {
      data.read(*engine, {0}, 1, where);  // bytes 4096..8191 of a 5,000-byte file
      FAIL("a short file was read without an error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::data);
      CHECK_THAT(e.what(), Catch::Contains("f0.bin"));
    }
  }
}

TEST_CASE("the io_uring engine has a whole batch's reads in flight and reads every sample", "[storage]") {
  Dataset data(8);
  auto engine = storage::make_read_engine({.kind = EngineKind::io_uring, .depth = 4});
  CHECK(engine->overlaps_reads());
  FixedRecords where;
  where.size = 8192;
  test::Calls calls;
  {
    const storage::ScopedObserver observe(&calls);
    data.read(*engine, {0, 1, 2, 3, 4, 5, 6, 7}, 2, where);
  }
  // Every file opened before the first read, and closed after the last.
  CHECK(calls.sequence().starts_with("open open open open open open open open read"));
  CHECK(calls.count(Op::read) == 8);
  CHECK(calls.bytes(Op::read) == 8 * 8192);
  CHECK(calls.count(Op::close) == 8);
}

TEST_CASE("the mmap engine maps each file once and touches the sample's pages", "[storage]") {
  Dataset data(2, 1 << 20);
  auto engine = storage::make_read_engine({.kind = EngineKind::mmap});
  FixedRecords where;
  where.size = 64 << 10;
  test::Calls calls;
  {
    const storage::ScopedObserver observe(&calls);
    for (std::uint64_t s = 0; s < 3; ++s) data.read(*engine, {0, 1}, s, where);
  }
  CHECK(calls.count(Op::mmap) == 2);
  CHECK(calls.count(Op::touch) == 6);
  CHECK(calls.bytes(Op::touch) == 6 * (64 << 10));
  CHECK(where.sizes_seen.front() == 1 << 20);  // a map knows its size without asking
}

TEST_CASE("O_DIRECT engines read the aligned range around a sample", "[storage]") {
  Dataset data(1, 1 << 18);
  const std::size_t a = storage::direct_alignment(data.paths[0]).offset;
  for (EngineKind kind : {EngineKind::posix, EngineKind::io_uring}) {
    auto engine = storage::make_read_engine({.kind = kind, .direct = true, .depth = 2});
    FixedRecords where;
    where.header = 100;
    where.size = 3000;
    test::Calls calls;
    try {
      const storage::ScopedObserver observe(&calls);
      data.read(*engine, {0}, 5, where);  // bytes 15,100..18,099
    } catch (const Error& e) {
      WARN("O_DIRECT is not supported where the tests write (" << e.what() << "): skipped");
      return;
    }
    const std::uint64_t start = 15100 / a * a, end = (18100 + a - 1) / a * a;
    REQUIRE(read_offsets(calls) == std::vector<std::uint64_t>{start});
    CHECK(calls.bytes(Op::read) == end - start);
    for (const auto& e : calls.events)
      if (e.op == Op::read) CHECK(e.direct);
  }
}
