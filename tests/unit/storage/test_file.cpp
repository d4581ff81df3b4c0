#include <catch2/catch.hpp>

#include <fcntl.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "storage/aligned_buffer.hpp"
#include "storage/atomic_file.hpp"
#include "storage/file.hpp"
#include "storage/io_observer.hpp"
#include "storage/mapped_file.hpp"
#include "storage/uring.hpp"
#include "unit/storage/observed_calls.hpp"
#include "unit/temp_dir.hpp"
#include "util/error.hpp"

using namespace trainio;
using storage::File;
using storage::Op;

using test::Calls;
using test::pattern;
using test::write_text;

TEST_CASE("File writes and reads back at offsets, and the thread's observer sees every call", "[storage]") {
  test::TempDir dir("file");
  const std::string path = dir / "f.bin", bytes = pattern(10000);
  Calls calls;
  const storage::ScopedObserver observe(&calls);
  {
    File out = File::open(path, {.access = storage::Access::write_new});
    out.pwrite_all(bytes.data(), bytes.size(), 0);
    out.fsync();
    out.close();
  }
  File in = File::open(path);
  CHECK(in.size() == 10000);
  std::string got(4000, '\0');
  in.pread_exact(got.data(), got.size(), 5000);
  CHECK(got == bytes.substr(5000, 4000));
  CHECK(in.pread_some(got.data(), got.size(), 9000) == 1000);  // short at the end of the file
  in.close();
  CHECK(calls.count(Op::open) == 2);
  CHECK(calls.count(Op::close) == 2);
  CHECK(calls.count(Op::fsync) == 1);
  CHECK(calls.bytes(Op::write) == 10000);
  CHECK(calls.bytes(Op::read) == 5000);
  for (const auto& e : calls.events)
    if (e.op == Op::read) CHECK(e.has_offset);
}

TEST_CASE("File errors name the call, the path and a fix", "[storage]") {
  test::TempDir dir("file-errors");
  try {
    File::open(dir / "missing.bin");
    FAIL("opened a missing file");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::io);
    CHECK_THAT(e.what(), Catch::Contains("missing.bin") && Catch::Contains("No such file"));
    CHECK_FALSE(e.hint().empty());
  }
  write_text(dir / "exists.bin", "x");
  CHECK_THROWS_WITH(File::open(dir / "exists.bin", {.access = storage::Access::write_new}),
                    Catch::Contains("exists.bin") && Catch::Contains("File exists"));
  write_text(dir / "short.bin", pattern(100));
  File in = File::open(dir / "short.bin");
  char buffer[200];
  try {
    in.pread_exact(buffer, sizeof buffer, 0);
    FAIL("read past the end");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::data);  // a short file is the dataset's fault, not the storage's
    CHECK_THAT(e.what(), Catch::Contains("short.bin"));
  }
}

TEST_CASE("O_DIRECT reads at the reported alignment return the file's bytes", "[storage]") {
  test::TempDir dir("direct");
  const std::string path = dir / "d.bin", bytes = pattern(1 << 16);
  write_text(path, bytes);
  const storage::DirectAlignment a = storage::direct_alignment(path);
  CHECK(a.offset >= 1);
  CHECK((a.offset & (a.offset - 1)) == 0);  // powers of two
  CHECK((a.memory & (a.memory - 1)) == 0);
  File in;
  try {
    in = File::open(path, {.direct = true});
  } catch (const Error& e) {
    WARN("O_DIRECT is not supported where the tests write (" << e.what() << "): skipped");
    return;
  }
  CHECK(in.direct());
  storage::AlignedBuffer buffer;
  char* p = buffer.reserve(4 * a.offset, std::max<std::size_t>(a.memory, 64));
  CHECK(reinterpret_cast<std::uintptr_t>(p) % a.memory == 0);
  in.pread_exact(p, 4 * a.offset, 8 * a.offset);
  CHECK(std::memcmp(p, bytes.data() + 8 * a.offset, 4 * a.offset) == 0);
}

TEST_CASE("io_uring reads a batch of ranges with all of them in flight", "[storage]") {
  test::TempDir dir("uring");
  const std::string path = dir / "u.bin", bytes = pattern(1 << 20);
  write_text(path, bytes);
  File f = File::open(path);
  std::vector<std::string> buffers(8, std::string(4096, '\0'));
  std::vector<storage::AsyncRead> reads;
  for (std::size_t i = 0; i < buffers.size(); ++i)
    reads.push_back({&f, buffers[i].data(), 4096, (7 - i) * 100000, 0});
  reads.push_back({&f, buffers[0].data(), 4096, bytes.size() - 1000, 0});  // ends early: 1000 bytes
  storage::Uring ring(4);  // fewer slots than reads: the ring is refilled as reads complete
  try {
    ring.read_all(reads);
  } catch (const Error& e) {
    WARN("io_uring is not allowed here (" << e.what() << "): skipped");
    return;
  }
  for (std::size_t i = 1; i < buffers.size(); ++i) {
    CHECK(reads[i].done == 4096);
    CHECK(buffers[i] == bytes.substr((7 - i) * 100000, 4096));
  }
  CHECK(reads.back().done == 1000);
}

TEST_CASE("io_uring reads without buffers of their own share one per read in flight", "[storage]") {
  test::TempDir dir("uring-slots");
  const std::string path = dir / "u.bin", bytes = pattern(1 << 20);
  write_text(path, bytes);
  File f = File::open(path);
  std::vector<storage::AsyncRead> reads;
  for (std::size_t i = 0; i < 9; ++i) reads.push_back({&f, nullptr, 4096, i * 100000, 0});
  reads.push_back({&f, nullptr, 4096, bytes.size() - 1000, 0});  // ends early: 1000 bytes
  storage::Uring ring(4);
  std::vector<char> slots(4 * 4096);
  try {
    ring.read_all(reads, slots.data(), 4096);
  } catch (const Error& e) {
    WARN("io_uring is not allowed here (" << e.what() << "): skipped");
    return;
  }
  for (std::size_t i = 0; i + 1 < reads.size(); ++i) CHECK(reads[i].done == 4096);
  CHECK(reads.back().done == 1000);
  for (const auto& r : reads) CHECK(r.buffer == nullptr);  // every slot went back
  // A read larger than a slot is refused, not written past it.
  std::vector<storage::AsyncRead> big{{&f, nullptr, 8192, 0, 0}};
  CHECK_THROWS_AS(ring.read_all(big, slots.data(), 4096), Error);
}

TEST_CASE("a mapped file touches the pages of a range, and a range past its end is refused", "[storage]") {
  test::TempDir dir("mmap");
  const std::string path = dir / "m.bin";
  write_text(path, pattern(3 * 4096));
  Calls calls;
  const storage::ScopedObserver observe(&calls);
  storage::MappedFile m = storage::MappedFile::open(path);
  CHECK(m.size() == 3 * 4096);
  CHECK(std::memcmp(m.data(), pattern(10).data(), 10) == 0);
  (void)m.touch(4096, 8192);
  CHECK(calls.count(Op::mmap) == 1);
  CHECK(calls.bytes(Op::touch) == 8192);
  CHECK_THROWS_WITH(m.touch(8192, 8192), Catch::Contains("m.bin"));
}

TEST_CASE("an atomic file appears under its name only when committed", "[storage]") {
  test::TempDir dir("atomic");
  const std::string path = dir / "result.json";
  {
    storage::AtomicFile f(path, true);
    f.write("{\"partial\":");
    CHECK_FALSE(std::filesystem::exists(path));
  }  // dropped without commit: nothing under the name, no temporary left
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(std::filesystem::is_empty(dir.path()));
  {
    storage::AtomicFile f(path, false);
    f.write(pattern(100000));
    f.commit();
  }
  CHECK(std::filesystem::file_size(path) == 100000);
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 1);
}

TEST_CASE("a reopened handle closes its last file, opens the next and reports it as that file's", "[storage]") {
  test::TempDir dir("reopen");
  const std::string a = dir / "a.bin", b = dir / "b.bin";
  write_text(a, pattern(100));
  write_text(b, pattern(200));
  Calls calls;
  const storage::ScopedObserver observe(&calls);
  File f;
  f.reopen(a);
  CHECK(f.size() == 100);
  f.reopen(b);
  CHECK(f.path() == b);
  CHECK(f.size() == 200);
  char first[4];
  f.pread_exact(first, sizeof first, 0);
  CHECK(std::memcmp(first, pattern(4).data(), 4) == 0);
  f.close();
  CHECK(calls.sequence() == "open stat close open stat read close");
  CHECK(calls.events[0].file != calls.events[3].file);  // each open is its own file's
  CHECK(calls.events[3].file == storage::path_hash(b));
  CHECK_THROWS_AS(f.reopen(dir / "missing.bin"), Error);
  CHECK_FALSE(f.is_open());
}

TEST_CASE("a duplicate made into a kept handle shares the file's offset", "[storage]") {
  test::TempDir dir("dup");
  const std::string path = dir / "d.bin";
  write_text(path, pattern(1000));
  File f = File::open(path), copy;
  for (int round = 0; round < 2; ++round) {
    f.duplicate_for_stdio_into(copy);
    CHECK(copy.path() == path);
    CHECK(copy.fd() != f.fd());
    f.seek(100 + round, SEEK_SET);
    CHECK(copy.seek(0, SEEK_CUR) == static_cast<std::uint64_t>(100 + round));  // one open file description
  }
  copy.close();
  f.close();
}
