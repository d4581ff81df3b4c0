#include "format/tfrecord/tfrecord_python.hpp"

#include <fmt/format.h>

#include "format/tfrecord/tfrecord.hpp"
#include "util/error.hpp"

namespace trainio::format {

void PythonTfRecordReader::close() {
  if (!open_) return;
  file_.close();
  open_ = false;
}

std::uint64_t PythonTfRecordReader::read(const SampleRequest& r) {
  const std::string& path = *r.path;
  const tfrecord::ExampleFrame& frame = frame_.of(r.shape);
  const std::uint64_t record = frame.record_bytes();
  const std::uint64_t offset = r.sample * record;
  if (record_.size() < record) record_.resize(record);

  if (open_ && open_file_ != r.file) close();
  if (!open_) {
    file_.open(path);
    open_ = true;
    open_file_ = r.file;
    next_offset_ = 0;
  }
  // A map-style Dataset seeks to every record it reads; a loop only where it skips.
  const bool in_order = offset == next_offset_;
  if (!keep_open_ || !in_order) file_.seek(static_cast<std::int64_t>(offset), SEEK_SET);

  char* out = record_.data();
  auto read_exact = [&](char* dest, std::size_t n, const char* what) {
    if (file_.read(dest, n) != n)
      throw data_error(fmt::format("'{}': the file ends inside record {} (at offset {}, reading its {}); the dataset's "
                                   "settings give {} records of {} bytes",
                                   path, r.sample, offset, what, r.samples_in_file, record),
                       tfrecord::kRegenerate);
  };
  read_exact(out, tfrecord::kHeaderBytes, "length");
  read_exact(out + tfrecord::kHeaderBytes, static_cast<std::size_t>(frame.data_bytes()), "data");
  read_exact(out + tfrecord::kHeaderBytes + frame.data_bytes(), tfrecord::kFooterBytes, "data CRC");
  tfrecord::check_record(out, frame, path, r.sample, offset);
  next_offset_ = offset + record;

  if (!keep_open_) {
    close();
  } else if (in_order && r.sample + 1 == r.samples_in_file) {
    // The loop's next read(12) finds the end of the file; then it closes the file.
    char probe[tfrecord::kHeaderBytes];
    if (file_.read(probe, sizeof probe) != 0)
      throw data_error(fmt::format("'{}': more than the {} records the dataset's settings give", path, r.samples_in_file),
                       tfrecord::kRegenerate);
    close();
  }
  return frame.image_bytes;
}

}  // namespace trainio::format
