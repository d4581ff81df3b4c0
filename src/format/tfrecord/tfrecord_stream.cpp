#include "format/tfrecord/tfrecord_stream.hpp"

#include <fmt/format.h>

#include <cstring>

#include "format/crc32c.hpp"
#include "format/tfrecord/tfrecord.hpp"
#include "util/error.hpp"

namespace trainio::format {

namespace {
std::uint32_t le32(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
}  // namespace

TfRecordStream::TfRecordStream(std::size_t buffer_size)
    : buffer_size_(buffer_size == 0 ? kDefaultBuffer : buffer_size), buffer_(buffer_size_) {}

void TfRecordStream::open(const std::string& path, std::uint64_t records) {
  file_.reopen(path, {.close_on_exec = false});  // PosixRandomAccessFile: open(O_RDONLY)
  pos_ = limit_ = 0;
  file_offset_ = 0;
  at_end_ = false;
  record_offset_ = 0;
  records_ = 0;
  expected_records_ = records;
}

bool TfRecordStream::fill() {
  // RandomAccessInputStream::ReadNBytes(B): PosixRandomAccessFile::Read preads until B bytes or
  // a pread returns 0.
  pos_ = limit_ = 0;
  if (at_end_) return false;
  while (limit_ < buffer_size_) {
    const std::size_t n = file_.pread_some(buffer_.data() + limit_, buffer_size_ - limit_, file_offset_);
    if (n == 0) {
      at_end_ = true;
      break;
    }
    limit_ += n;
    file_offset_ += n;
  }
  return limit_ > 0;
}

std::size_t TfRecordStream::read_n(std::size_t n) {
  record_.resize(n);
  std::size_t done = 0;
  while (done < n) {
    if (pos_ == limit_ && !fill()) break;
    const std::size_t take = std::min(limit_ - pos_, n - done);
    std::memcpy(record_.data() + done, buffer_.data() + pos_, take);
    pos_ += take;
    done += take;
  }
  return done;
}

bool TfRecordStream::next(std::uint64_t& length) {
  auto corrupt = [&](const std::string& what) {
    return data_error(fmt::format("'{}': corrupted record at offset {}: {}", path(), record_offset_, what),
                      tfrecord::kRegenerate);
  };
  const std::size_t header = read_n(tfrecord::kHeaderBytes);
  if (header == 0) {  // the end of the file, between records
    if (records_ != expected_records_)
      throw corrupt(fmt::format("the file ends after {} records, expected {}", records_, expected_records_));
    return false;
  }
  if (header < tfrecord::kHeaderBytes) throw corrupt("truncated record header");
  if (records_ == expected_records_) throw corrupt(fmt::format("more than the {} records expected", expected_records_));
  std::memcpy(&length, record_.data(), 8);
  if (crc32c::mask(crc32c::value(record_.data(), 8)) != le32(record_.data() + 8)) throw corrupt("bad length CRC");
  if (length > (1ull << 40)) throw corrupt("implausible record length");
  if (read_n(static_cast<std::size_t>(length) + tfrecord::kFooterBytes) < length + tfrecord::kFooterBytes)
    throw corrupt("the file ends inside the record");
  if (crc32c::mask(crc32c::value(record_.data(), length)) != le32(record_.data() + length)) throw corrupt("bad data CRC");
  record_offset_ += tfrecord::kHeaderBytes + length + tfrecord::kFooterBytes;
  ++records_;
  return true;
}

}  // namespace trainio::format
