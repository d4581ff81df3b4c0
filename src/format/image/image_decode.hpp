#pragma once
// Decoding what an image file holds, as Pillow does when DLIO's reader loads it, so that
// `trainio validate` refuses a file that does not hold the image the plan describes (the run only
// checks the structure: JpegMarkers). Decoder warnings (libjpeg's
// "Premature end of JPEG file", "Corrupt JPEG data") are errors, and nothing is printed: what
// went wrong comes back as text for the caller's error.

#include <cstddef>
#include <cstdint>
#include <memory>

namespace trainio::format {

// Supplies a file's bytes to a decoder piece by piece, as they are read.
class ImageSource {
 public:
  virtual ~ImageSource() = default;
  // Points `data` at the next bytes and returns how many; 0 at the end of the file.
  virtual std::size_t next(const unsigned char*& data) = 0;
};

struct DecodedImage {
  std::uint64_t height = 0, width = 0;
  int components = 0;
  std::uint64_t unread = 0;  // bytes supplied but left after the end of the image
};

// libjpeg-turbo's decompressor, reusable for many images.
class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
  // Decodes every scanline of the image `source` supplies. Returns nullptr, or what is wrong
  // (valid until the next call). An exception the source throws (a failed read) passes through.
  const char* decode(ImageSource& source, DecodedImage& out);

  struct State;  // libjpeg's objects; public only for its C callbacks

 private:
  std::unique_ptr<State> state_;
};

}  // namespace trainio::format
