#pragma once
// A PyTorch Dataset reading TFRecord files through Python's file object: what a hand-written
// Python loop does, and the `tfrecord` package's iterator (tfrecord.reader.tfrecord_iterator):
// open(path, "rb") (openat, fstat, the isatty probe, lseek), then per record read(12) for the
// length and its CRC, read(length) for the Example, read(4) for its CRC, on Python's buffered
// reader (python_io.hpp: st_blksize refills, large reads straight to the destination).
//
// A request for the record right after the last one read goes on reading; any other seeks to it
// (Python's seek: no system call inside the buffer). read_type: memory keeps the file open while
// its records are read, as a loop over a file does: after its last record, read in order, the
// loop's read(12) finds the end of the file (one read returning 0) and closes it. on_demand
// opens, seeks and closes per sample, as a map-style Dataset does. DLIO has no such reader; the
// tfrecord package also calls tell() (one lseek) before every record, which this does not.
// Both CRCs are checked (the package skips them) so no run reads a broken dataset.

#include <cstdint>
#include <string>

#include "format/format.hpp"
#include "format/python_io.hpp"
#include "format/tfrecord/tfrecord.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

class PythonTfRecordReader final : public SampleReader {
 public:
  // `python_buffer`: reader.python_buffer_size (0: the file's st_blksize, as Python takes it).
  PythonTfRecordReader(std::size_t python_buffer, bool keep_open) : file_(python_buffer), keep_open_(keep_open) {}
  ~PythonTfRecordReader() override { close(); }
  std::uint64_t read(const SampleRequest& r) override;

 private:
  void close();

  PyBufferedFile file_;
  bool keep_open_;
  bool open_ = false;
  std::uint64_t open_file_ = 0;     // the dataset's number of the open file
  std::uint64_t next_offset_ = 0;   // where the record after the last one read starts
  util::Bytes record_;
  tfrecord::FrameOfShape frame_;
};

}  // namespace trainio::format
