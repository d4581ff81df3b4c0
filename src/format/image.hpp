#pragma once
// JPEG and PNG: one grayscale d1 x d2 image per file, encoded with the real encoders
// (libjpeg-turbo at quality 75, libpng at zlib level 6: PIL's defaults, which DLIO uses).

#include <vector>

#include "format/format.hpp"
#include "format/jpeg_markers.hpp"
#include "format/python_io.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

class ImageWriter final : public ByteWriter {
 public:
  enum class Codec { jpeg, png };
  explicit ImageWriter(Codec codec) : codec_(codec) {}
  // Compressed sizes are known only after encoding.
  std::optional<std::uint64_t> expected_size(const plan::DataFile&) const override { return std::nullopt; }

 protected:
  void write_bytes(const plan::DataFile& file, storage::Output& out, ContentSource& content) override;

 private:
  Codec codec_;
  std::vector<unsigned char> pixels_;
  std::vector<unsigned char> encoded_;
};

// Image dimensions (height d1, width d2) every file of a dataset is encoded with.
struct ImageSize {
  std::uint64_t height = 0, width = 0;
};
ImageSize image_size(const plan::SampleShape& shape);

// DLIO's ImageReader: np.asarray(PIL.Image.open(path)). Pillow reads through Python's buffered
// file: the header from the first buffer, then 64 KiB blocks for the decoder (a JPEG from the
// start of the file; a PNG chunk by chunk, IDAT data only, with a tell() per chunk header).
// The reader checks the structure of what it read against the plan (JPEG markers and frame
// header; PNG chunks, CRCs and header; the file's size) and refuses a file that is not the image
// the plan describes. It does not decode: decoding is the framework's CPU cost, which
// reader.preprocess_time emulates, and `trainio validate` decodes every file.
class ImageReader final : public SampleReader {
 public:
  explicit ImageReader(ImageWriter::Codec codec) : codec_(codec), block_(kDecoderBlock) {}
  std::uint64_t read(const SampleRequest& r) override;

 private:
  static constexpr std::size_t kDecoderBlock = 65536;  // PIL.ImageFile.MAXBLOCK
  void read_jpeg(const std::string& path, ImageSize want);
  void read_png(const std::string& path, ImageSize want);
  ImageWriter::Codec codec_;
  PyBufferedFile file_;
  util::Bytes block_;
  JpegMarkers jpeg_;
};

// Decodes the whole file with libjpeg / libpng and checks its size and mode.
std::optional<std::string> validate_image(const plan::DataFile& expected, ImageWriter::Codec codec);

}  // namespace trainio::format
