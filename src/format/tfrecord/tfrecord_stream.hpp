#pragma once
// TensorFlow's TFRecordDataset reading one file, re-enacted: PosixRandomAccessFile (open with
// O_RDONLY, no O_CLOEXEC, no fstat), a BufferedInputStream of `buffer_size` bytes (transfer_size;
// 256 KiB when unset, as TensorFlow's Python layer sets it), and RecordReader's two reads per
// record (the 12-byte header, then data + CRC) through it. The buffer is refilled with preads of
// `buffer_size` at consecutive offsets whatever the record boundaries; a short read at the end is
// followed by one more pread that returns 0. Both CRCs are checked, as TensorFlow checks them.

#include <cstdint>
#include <string>
#include <vector>

#include "storage/file.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

class TfRecordStream {
 public:
  static constexpr std::size_t kDefaultBuffer = 256u << 10;

  explicit TfRecordStream(std::size_t buffer_size);
  // `records`: how many records the plan says the file holds; a file that ends after fewer, or
  // holds more, is a dataset error (TensorFlow would read whatever is there).
  void open(const std::string& path, std::uint64_t records);
  // The next record's data length; false at the end of the file. Corruption is a dataset error.
  bool next(std::uint64_t& length);
  void close() { file_.close(); }
  const std::string& path() const { return file_.path(); }

 private:
  // BufferedInputStream::ReadNBytes into record_; returns the bytes it got (fewer only at the end
  // of the file).
  std::size_t read_n(std::size_t n);
  bool fill();

  std::size_t buffer_size_;
  storage::File file_;
  util::Bytes buffer_;
  std::size_t pos_ = 0, limit_ = 0;
  std::uint64_t file_offset_ = 0;  // where the next pread starts
  bool at_end_ = false;            // a read came back short: OUT_OF_RANGE from here on
  std::uint64_t record_offset_ = 0;
  std::uint64_t records_ = 0, expected_records_ = 0;
  util::Bytes record_;
};

}  // namespace trainio::format
