#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "../temp_dir.hpp"
#include "format/crc32c.hpp"
#include "format/tfrecord/tfrecord.hpp"
#include "format/tfrecord/tfrecord_stream.hpp"
#include "metrics/io_recorder.hpp"
#include "storage/io_observer.hpp"
#include "util/error.hpp"

using namespace trainio;

namespace {

std::string record(const std::string& data) {
  std::string out = format::tfrecord::record_header(data.size()) + data;
  const std::uint32_t crc = format::crc32c::mask(format::crc32c::value(data.data(), data.size()));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(crc >> (8 * i)));
  return out;
}

void write(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// Streams every record of `path`; returns their lengths and the reads it took.
std::vector<std::uint64_t> stream(const std::string& path, std::size_t buffer, metrics::IoRecorder& io,
                                  std::uint64_t records) {
  storage::ScopedObserver observe(&io);
  format::TfRecordStream in(buffer);
  in.open(path, records);
  std::vector<std::uint64_t> lengths;
  std::uint64_t length = 0;
  while (in.next(length)) lengths.push_back(length);
  in.close();
  return lengths;
}

}  // namespace

TEST_CASE("the TFRecord stream reads whole buffers, whatever the record boundaries") {
  test::TempDir dir("tfstream");
  std::string file;
  for (std::size_t n : {100u, 3000u, 1u, 700u}) file += record(std::string(n, 'a'));  // 3865 bytes
  write(dir / "f", file);
  metrics::IoRecorder io;
  CHECK(stream(dir / "f", 1024, io, 4) == std::vector<std::uint64_t>{100, 3000, 1, 700});
  // 3 full reads, a short one (793 bytes) and the read that finds the end.
  CHECK(io.op(storage::Op::read).count == 5);
  CHECK(io.op(storage::Op::read).bytes == file.size());
  CHECK(io.op(storage::Op::open).count == 1);
  CHECK(io.op(storage::Op::stat).count == 0);  // TensorFlow never stats the file
}

TEST_CASE("a file that is a whole number of buffers still ends with a read of nothing") {
  test::TempDir dir("tfstream");
  const std::string file = record(std::string(1008, 'b'));  // 1024 bytes
  write(dir / "f", file);
  metrics::IoRecorder io;
  CHECK(stream(dir / "f", 512, io, 1).size() == 1);
  CHECK(io.op(storage::Op::read).count == 3);
}

TEST_CASE("corrupt or truncated TFRecords are dataset errors naming the file and offset") {
  test::TempDir dir("tfstream");
  const std::string good = record("hello") + record("world");
  metrics::IoRecorder io;
  auto expect_error = [&](const std::string& bytes, const std::string& what) {
    write(dir / "bad", bytes);
    try {
      stream(dir / "bad", 64, io, 2);
      FAIL("no error for " << what);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::data);
      CHECK_THAT(e.what(), Catch::Contains("bad") && Catch::Contains(what));
    }
  };
  std::string flipped = good;
  flipped[good.size() - 6] ^= 1;  // a data byte of the second record
  expect_error(flipped, "offset 21: bad data CRC");
  std::string length = good;
  length[0] ^= 1;
  expect_error(length, "bad length CRC");
  expect_error(good.substr(0, good.size() - 3), "ends inside the record");
  expect_error(good + "xyz", "truncated record header");
  // Cut or grown at a record boundary: TensorFlow reads what is there; the plan says 2 records.
  expect_error(record("hello"), "offset 21: the file ends after 1 records, expected 2");
  expect_error("", "offset 0: the file ends after 0 records, expected 2");
  expect_error(good + record("again"), "offset 42: more than the 2 records expected");
}
