#include <catch2/catch.hpp>

#include <fstream>
#include <initializer_list>
#include <string>

#include "../temp_dir.hpp"
#include "format/crc32c.hpp"
#include "format/tfrecord/tfrecord.hpp"
#include "format/tfrecord/tfrecord_python.hpp"
#include "metrics/io_recorder.hpp"
#include "storage/io_observer.hpp"
#include "util/error.hpp"

using namespace trainio;

namespace {

constexpr std::uint64_t kImage = 10000;  // sample bytes: records larger than a 4 KiB buffer

// One record as DLIO's generator writes it for a sample of kImage bytes.
std::string python_test_record() {
  const auto frame = format::tfrecord::example_frame(kImage, static_cast<std::int64_t>(kImage));
  const std::string data = frame.prefix + std::string(kImage, 'x') + frame.suffix;
  std::string out = format::tfrecord::record_header(data.size()) + data;
  const std::uint32_t crc = format::crc32c::mask(format::crc32c::value(data.data(), data.size()));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(crc >> (8 * i)));
  return out;
}

struct PythonTfRecordFile {
  test::TempDir dir{"tfpython"};
  std::string path = dir / "f.tfrecord";
  explicit PythonTfRecordFile(const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }
  format::SampleRequest request(std::uint64_t sample, std::uint64_t samples = 3) const {
    format::SampleRequest r;
    r.path = &path;
    r.shape.push(kImage);
    r.samples_in_file = samples;
    r.sample = sample;
    return r;
  }
  // The calls a reader (keeping the file open or not) makes for these samples, in this order.
  metrics::IoRecorder calls(bool keep_open, std::initializer_list<std::uint64_t> samples) const {
    metrics::IoRecorder io;
    storage::ScopedObserver observe(&io);
    format::PythonTfRecordReader reader(4096, keep_open);
    for (const std::uint64_t s : samples) CHECK(reader.read(request(s)) == kImage);
    return io;
  }
};

}  // namespace

TEST_CASE("a Python loop reads a TFRecord file through its buffer and ends with a read of nothing") {
  const std::string one = python_test_record();
  PythonTfRecordFile f(one + one + one);
  const metrics::IoRecorder io = f.calls(true, {0, 1, 2});
  CHECK(io.op(storage::Op::open).count == 1);
  CHECK(io.op(storage::Op::stat).count == 1);   // io.open's fstat
  CHECK(io.op(storage::Op::seek).count == 1);   // BufferedReader's lseek(0, SEEK_CUR) at open: no other
  CHECK(io.op(storage::Op::close).count == 1);  // closed after the last record, as the loop's with-block
  CHECK(io.op(storage::Op::read).bytes == 3 * one.size());
  // Per record: a 4 KiB refill for the header, the rest of the data in whole blocks straight to
  // the destination, a refill for its tail and the CRC; then the read that finds the end.
  CHECK(io.op(storage::Op::read).count == 8);
}

TEST_CASE("records asked out of order are sought; on_demand opens and closes per sample") {
  const std::string one = python_test_record();
  PythonTfRecordFile f(one + one + one);
  const metrics::IoRecorder io = f.calls(true, {2, 0});
  CHECK(io.op(storage::Op::open).count == 1);
  CHECK(io.op(storage::Op::seek).count == 3);  // the open's, then one per record out of order
  const metrics::IoRecorder each = f.calls(false, {0, 1});
  CHECK(each.op(storage::Op::open).count == 2);
  CHECK(each.op(storage::Op::close).count == 2);
  CHECK(each.op(storage::Op::seek).count == 4);  // each open's, and a seek to each record
}

TEST_CASE("a TFRecord file cut short, grown or damaged stops the Python reader naming it") {
  const std::string one = python_test_record();
  auto expect_error = [&](const std::string& bytes, std::uint64_t sample, const std::string& what) {
    PythonTfRecordFile f(bytes);
    format::PythonTfRecordReader reader(4096, true);
    try {
      for (std::uint64_t s = 0; s <= sample; ++s) reader.read(f.request(s));
      FAIL("no error for " << what);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::data);
      CHECK_THAT(e.what(), Catch::Contains("f.tfrecord") && Catch::Contains(what));
    }
  };
  expect_error(one + one, 2, "the file ends inside record 2");
  expect_error(one + one + one.substr(0, 100), 2, "reading its data");
  expect_error(one + one + one + one, 2, "more than the 3 records");
  std::string flipped = one + one + one;
  flipped[one.size() + 500] ^= 1;
  expect_error(flipped, 1, "record 1 at offset " + std::to_string(one.size()) + ": bad data CRC");
}
