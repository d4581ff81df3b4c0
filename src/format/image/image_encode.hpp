#pragma once
// Image files of an exact size. A dataset plans each image file's bytes (its d1 x d2 pixels, one
// byte each: what DLIO's dimensions give and what the MLCommons fork writes), and the file on
// disk must hold that many, or the storage moves other bytes than the workload says (a JPEG of
// random pixels at quality 75 is about 56% of them). Both encoders put every byte where Pillow's
// reader reads it exactly once, so the bytes a reader moves are the planned bytes:
//  - JPEG: baseline, 8-bit grayscale, Pillow's headers (JFIF, the quality-75 table, the standard
//    Huffman tables); the coded data holds random coefficients (each within what 8-bit samples
//    give after quantization) whose coded length makes the file exactly the planned size.
//  - PNG: libpng at zlib level 6 with 64 KiB IDAT chunks, as Pillow writes; random pixels but for
//    a run of zero ones at the start (as many as the filter bytes and framing add), and a private
//    ancillary chunk "paDd" of random bytes before the image data making up the rest (Pillow
//    reads such a chunk as it opens the file, and libpng skips it after checking its CRC).

#include <cstdint>
#include <memory>
#include <vector>

namespace trainio::format {

class ContentSource;

// Image dimensions (height d1, width d2).
struct ImageSize {
  std::uint64_t height = 0, width = 0;
};

// The smallest file of an image of `size` each encoder can make (headers and the least image
// data); a planned size below it cannot be met.
std::uint64_t jpeg_min_bytes(ImageSize size);
std::uint64_t png_min_bytes(ImageSize size);

// A baseline JPEG of `size` whose file is exactly `bytes` long (>= jpeg_min_bytes), its coded
// data drawn from `content`. Reusable across images; allocates only as `out` grows.
class JpegEncoder {
 public:
  JpegEncoder();
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;
  void encode(ImageSize size, std::uint64_t bytes, ContentSource& content, std::vector<unsigned char>& out);

  struct Tables;  // the quantization and Huffman tables, and what each block can cost

 private:
  std::unique_ptr<Tables> tables_;
};

// A PNG of `size` exactly `bytes` long (>= png_min_bytes), pixels drawn from `content`.
void encode_png_exact(ImageSize size, std::uint64_t bytes, ContentSource& content, std::vector<unsigned char>& pixels,
                      std::vector<unsigned char>& out);

}  // namespace trainio::format
