#pragma once
// JPEG and PNG: one grayscale d1 x d2 image per file, exactly as many bytes on disk as the plan
// gives the file (d1 x d2: image_encode.hpp says how), encoded with PIL's defaults (JPEG quality
// 75 tables; PNG through libpng at zlib level 6), which DLIO uses.

#include <vector>

#include "format/format.hpp"
#include "format/image/image_encode.hpp"
#include "format/image/jpeg_markers.hpp"
#include "format/python_io.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

// Image dimensions (height d1, width d2) a file's image is encoded with.
ImageSize image_size(const plan::SampleShape& shape);
// The bytes the plan gives an image file: its pixels, one byte each (one image a file).
std::uint64_t image_file_bytes(const plan::DataFile& file);

class ImageWriter final : public ByteWriter {
 public:
  enum class Codec { jpeg, png };
  explicit ImageWriter(Codec codec);
  std::optional<std::uint64_t> expected_size(const plan::DataFile& f) const override { return image_file_bytes(f); }

 protected:
  void write_bytes(const plan::DataFile& file, storage::Output& out, ContentSource& content) override;

 private:
  Codec codec_;
  std::unique_ptr<JpegEncoder> jpeg_;
  std::vector<unsigned char> pixels_;
  std::vector<unsigned char> encoded_;
};

// Refuses (config error) a dataset with an image file whose planned size is below the least an
// image of its dimensions can take, or a JPEG side beyond 65535 pixels.
void check_image_sizes(ImageWriter::Codec codec, const plan::DatasetLayout& layout);

// DLIO's ImageReader: np.asarray(PIL.Image.open(path)). Pillow reads through Python's buffered
// file: the header from the first buffer, then 64 KiB blocks for the decoder (a JPEG from the
// start of the file; a PNG chunk by chunk, IDAT data only, with a tell() per chunk header).
// The reader checks the structure of what it read against the plan (JPEG markers and frame
// header; PNG chunks, CRCs and header; the file's size against the plan's) and refuses a file
// that is not the image the plan describes. It does not decode: decoding is the framework's CPU
// cost, which reader.preprocess_time emulates, and `trainio validate` decodes every file.
class ImageReader final : public SampleReader {
 public:
  explicit ImageReader(ImageWriter::Codec codec) : codec_(codec), block_(kDecoderBlock) {}
  std::uint64_t read(const SampleRequest& r) override;

 private:
  static constexpr std::size_t kDecoderBlock = 65536;  // PIL.ImageFile.MAXBLOCK
  void read_jpeg(const std::string& path, ImageSize want);
  void read_png(const std::string& path, ImageSize want);
  void check_size(const std::string& path, std::uint64_t planned) const;
  ImageWriter::Codec codec_;
  PyBufferedFile file_;
  util::Bytes block_;
  JpegMarkers jpeg_;
};

// Decodes the whole file with libjpeg / libpng and checks its dimensions, mode and file size.
std::optional<std::string> validate_image(const plan::DataFile& expected, ImageWriter::Codec codec);

}  // namespace trainio::format
