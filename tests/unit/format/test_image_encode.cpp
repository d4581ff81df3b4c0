// Image files of an exact size: every JPEG and PNG the encoders make has the planned size, decodes
// to the planned dimensions in grayscale with libjpeg / libpng without a warning, and passes the
// run's structure checks. JPEG headers are the ones libjpeg itself writes at quality 75.

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <jpeglib.h>

#include "format/image/image.hpp"
#include "format/image/image_decode.hpp"
#include "format/image/image_encode.hpp"
#include "format/image/jpeg_markers.hpp"
#include "unit/format/random_content.hpp"
#include "unit/temp_dir.hpp"

using namespace trainio;
using format::ImageSize;

namespace {

class Bytes final : public format::ImageSource {
 public:
  explicit Bytes(const std::vector<unsigned char>& b) : b_(b) {}
  std::size_t next(const unsigned char*& data) override {
    if (done_) return 0;
    done_ = true;
    data = b_.data();
    return b_.size();
  }

 private:
  const std::vector<unsigned char>& b_;
  bool done_ = false;
};

std::string jpeg_problem(const std::vector<unsigned char>& bytes, ImageSize size) {
  format::JpegDecoder decoder;
  Bytes source(bytes);
  format::DecodedImage got;
  if (const char* problem = decoder.decode(source, got)) return problem;
  if (got.components != 1 || got.height != size.height || got.width != size.width || got.unread != 0)
    return "decoded as another image";
  format::JpegMarkers markers;
  markers.start(size.height, size.width);
  if (const char* problem = markers.feed(bytes.data(), bytes.size())) return problem;
  if (const char* problem = markers.finish()) return problem;
  return "";
}

// What libjpeg writes for a grayscale image of `size` at quality 75 (PIL's defaults).
std::vector<unsigned char> libjpeg_image(ImageSize size) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* mem = nullptr;
  unsigned long mem_size = 0;
  jpeg_mem_dest(&c, &mem, &mem_size);
  c.image_width = static_cast<JDIMENSION>(size.width);
  c.image_height = static_cast<JDIMENSION>(size.height);
  c.input_components = 1;
  c.in_color_space = JCS_GRAYSCALE;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 75, TRUE);
  jpeg_start_compress(&c, TRUE);
  std::vector<unsigned char> row(size.width, 128);
  while (c.next_scanline < c.image_height) {
    JSAMPROW p = row.data();
    jpeg_write_scanlines(&c, &p, 1);
  }
  jpeg_finish_compress(&c);
  std::vector<unsigned char> out(mem, mem + mem_size);
  jpeg_destroy_compress(&c);
  std::free(mem);
  return out;
}

}  // namespace

TEST_CASE("JPEG files of exactly the planned size, from the least to one byte a pixel") {
  format::JpegEncoder encoder;
  test::RandomContent content(7);
  std::vector<unsigned char> out;
  const ImageSize sizes[] = {{568, 568}, {64, 64},    {100, 100}, {1, 4096},
                             {4096, 1},  {9, 9 * 40}, {37, 53},   {8, 8 * 50}};
  for (const ImageSize size : sizes) {
    const std::uint64_t pixels = size.height * size.width;
    const std::uint64_t least = format::jpeg_min_bytes(size);
    REQUIRE(least <= pixels);
    for (const std::uint64_t bytes : {pixels, least, least + 1, least + 7, (least + pixels) / 2, pixels - 1}) {
      INFO(size.height << "x" << size.width << ", " << bytes << " bytes");
      encoder.encode(size, bytes, content, out);
      CHECK(out.size() == bytes);
      CHECK(jpeg_problem(out, size) == "");
    }
  }
}

TEST_CASE("the JPEG headers are libjpeg's for the same image (PIL's defaults: JFIF, quality 75, standard tables)") {
  format::JpegEncoder encoder;
  test::RandomContent content(3);
  std::vector<unsigned char> ours;
  for (const ImageSize size : {ImageSize{568, 568}, ImageSize{1, 3000}, ImageSize{1000, 30}}) {
    encoder.encode(size, size.height * size.width, content, ours);
    const std::vector<unsigned char> theirs = libjpeg_image(size);
    // Everything up to the coded data (SOI, APP0, DQT, SOF0, DHT, DHT, SOS: 328 bytes).
    REQUIRE(theirs.size() > 328);
    CHECK(std::vector<unsigned char>(ours.begin(), ours.begin() + 328) ==
          std::vector<unsigned char>(theirs.begin(), theirs.begin() + 328));
    CHECK(ours[328 - 10] == 0xFF);
    CHECK(ours[328 - 9] == 0xDA);  // the scan header ends the headers
  }
}

TEST_CASE("JPEG content is the file's: the same stream gives the same bytes, another stream other bytes") {
  format::JpegEncoder encoder;
  std::vector<unsigned char> a, b, c;
  test::RandomContent one(1), again(1), other(2);
  encoder.encode({64, 64}, 4096, one, a);
  encoder.encode({64, 64}, 4096, again, b);
  encoder.encode({64, 64}, 4096, other, c);
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("PNG files of exactly the planned size decode with libpng") {
  test::TempDir dir("png-exact");
  test::RandomContent content(11);
  std::vector<unsigned char> pixels, out;
  const ImageSize sizes[] = {{568, 568}, {64, 64}, {31, 31}, {1, 4096}, {4096, 1}, {1024, 1024}};
  for (const ImageSize size : sizes) {
    const std::uint64_t pixel_count = size.height * size.width;
    for (const std::uint64_t bytes : {pixel_count, format::png_min_bytes(size), pixel_count - 100}) {
      if (bytes < format::png_min_bytes(size)) continue;
      INFO(size.height << "x" << size.width << ", " << bytes << " bytes");
      format::encode_png_exact(size, bytes, content, pixels, out);
      CHECK(out.size() == bytes);
      plan::DataFile f;
      f.path = dir / "image.png";
      f.sample.push(size.height);
      f.sample.push(size.width);
      f.num_samples = 1;
      {
        std::ofstream file(f.path, std::ios::binary | std::ios::trunc);
        file.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
      }
      const auto problem = format::validate_image(f, format::ImageWriter::Codec::png);
      // validate also compares the file's size with the plan's (the pixels): only that may differ.
      if (bytes == pixel_count) CHECK(problem == std::nullopt);
      else CHECK(problem.value_or("") == std::to_string(bytes) + " bytes, but the plan gives the file " +
                                           std::to_string(pixel_count));
    }
  }
}
