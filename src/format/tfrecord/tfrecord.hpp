#pragma once
// TFRecord: records of `uint64 length | uint32 masked CRC-32C of length | data | uint32 masked
// CRC-32C of data`, each data a serialized tf.train.Example with features "image" (the sample's
// bytes) and "size" (int64, the sample's first dimension), as DLIO's generator writes them; plus
// DALI's index file <data folder>/index/<train|valid>/<file>.idx ("offset length" per record).

#include <string>
#include <vector>

#include "format/format.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

namespace tfrecord {

inline constexpr std::size_t kHeaderBytes = 12;  // length + its CRC
inline constexpr std::size_t kFooterBytes = 4;   // data CRC
// The fix a damaged or mis-sized TFRecord file's error gives.
inline constexpr const char* kRegenerate =
    "regenerate the dataset with 'trainio generate' (trainio validate shows every bad file)";

// The serialized Example around the image bytes: prefix + image + suffix.
struct ExampleFrame {
  std::string prefix, suffix;
  std::uint64_t image_bytes = 0;
  std::uint64_t data_bytes() const { return prefix.size() + image_bytes + suffix.size(); }
  std::uint64_t record_bytes() const { return kHeaderBytes + data_bytes() + kFooterBytes; }
};
ExampleFrame example_frame(std::uint64_t image_bytes, std::int64_t size_value);
// The "size" feature DLIO's Example carries for a sample of this shape: its first dimension.
inline std::int64_t size_value(const plan::SampleShape& shape) {
  return shape.ndims ? static_cast<std::int64_t>(shape.dims[0]) : 0;
}

// The frame of the last sample shape asked for, kept: readers ask once per sample, and a file's
// samples share one shape, so no sample builds (allocates) its frame again.
class FrameOfShape {
 public:
  const ExampleFrame& of(const plan::SampleShape& shape) {
    const std::int64_t size = size_value(shape);
    if (!made_ || shape.bytes() != frame_.image_bytes || size != size_value_) {
      frame_ = example_frame(shape.bytes(), size);
      size_value_ = size;
      made_ = true;
    }
    return frame_;
  }

 private:
  ExampleFrame frame_;
  std::int64_t size_value_ = 0;
  bool made_ = false;
};

// The 12-byte record header for `length` data bytes.
std::string record_header(std::uint64_t length);

// Where DALI's index of a data file lives: <root>/index/<train|valid>/<file name>.idx.
std::string index_path(const plan::DataFile& f);

// Checks a whole record read from `path` (sample `sample`, at `offset`): both CRCs, and the length
// and Example framing `frame` gives. Throws a data error naming the file and the record.
void check_record(const char* record, const ExampleFrame& frame, const std::string& path, std::uint64_t sample,
                  std::uint64_t offset);

// Decodes a serialized Example into its "image" length and "size" value; false when malformed.
bool parse_example(std::string_view data, std::uint64_t& image_bytes, std::int64_t& size_value);

}  // namespace tfrecord

class TfRecordWriter final : public FileWriter {
 public:
  void write(const plan::DataFile& file, storage::NewObject& out, ContentSource& content) override;
  std::optional<std::uint64_t> expected_size(const plan::DataFile& file) const override;
  std::vector<std::string> companions(const plan::DataFile& file) const override { return {tfrecord::index_path(file)}; }

 private:
  util::Bytes buffer_;
};

// DALI's TFRecord reader: one read of the whole record at the offset its index gives.
class DaliTfRecordReader final : public SampleReader {
 public:
  std::uint64_t read(const SampleRequest& r) override;

 private:
  util::Bytes buffer_;
  storage::File file_;  // reopened per sample: its path's memory is reused
  tfrecord::FrameOfShape frame_;
};

std::optional<std::string> validate_tfrecord(const plan::DataFile& expected);

}  // namespace trainio::format
