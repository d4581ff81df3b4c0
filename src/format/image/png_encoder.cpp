// A PNG of an exact size: libpng as Pillow writes (zlib level 6, 64 KiB IDAT chunks), random
// pixels but for a run of zero ones at the start, long enough that deflate wins back what the
// filter bytes and the framing add to the pixels, then a private ancillary chunk before the
// image data that makes up the rest with random bytes.

#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <csetjmp>
#include <cstring>

#include "format/format.hpp"
#include "format/image/image_encode.hpp"
#include "util/error.hpp"

namespace trainio::format {

namespace {

constexpr std::uint64_t kChunkFraming = 12;  // length, type, CRC
constexpr unsigned char kPadType[4] = {'p', 'a', 'D', 'd'};  // ancillary, private, safe to copy

void png_to_vector(png_structp png, png_bytep data, png_size_t length) {
  auto* out = static_cast<std::vector<unsigned char>*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + length);
}

void encode_png(const unsigned char* pixels, ImageSize size, std::vector<unsigned char>& out) {
  out.clear();
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, &info);
    throw internal_error("libpng could not start an encoder");
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw internal_error("libpng failed to encode");
  }
  png_set_write_fn(png, &out, png_to_vector, nullptr);
  png_set_compression_level(png, 6);
  png_set_compression_buffer_size(png, 65536);  // 64 KiB IDAT chunks, as Pillow writes them
  png_set_IHDR(png, info, static_cast<png_uint_32>(size.width), static_cast<png_uint_32>(size.height), 8,
               PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (std::uint64_t y = 0; y < size.height; ++y)
    png_write_row(png, const_cast<png_bytep>(pixels + y * size.width));
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
}

void put32(unsigned char* p, std::uint32_t v) {
  p[0] = static_cast<unsigned char>(v >> 24);
  p[1] = static_cast<unsigned char>(v >> 16);
  p[2] = static_cast<unsigned char>(v >> 8);
  p[3] = static_cast<unsigned char>(v);
}

// Inserts a "paDd" chunk of `data` random bytes before the first IDAT chunk.
void insert_padding(std::vector<unsigned char>& png, std::uint64_t data, ContentSource& content) {
  std::size_t at = 8;  // after the signature
  while (at + 8 <= png.size() && std::memcmp(&png[at + 4], "IDAT", 4) != 0) {
    const std::uint32_t length = (std::uint32_t(png[at]) << 24) | (std::uint32_t(png[at + 1]) << 16) |
                                 (std::uint32_t(png[at + 2]) << 8) | png[at + 3];
    at += kChunkFraming + length;
  }
  if (at + 8 > png.size()) throw internal_error("libpng wrote no image data");
  std::vector<unsigned char> chunk(kChunkFraming + data);
  put32(chunk.data(), static_cast<std::uint32_t>(data));
  std::memcpy(chunk.data() + 4, kPadType, 4);
  if (data > 0) content.fill(chunk.data() + 8, data);
  const uLong crc = crc32(crc32(0, nullptr, 0), chunk.data() + 4, static_cast<uInt>(4 + data));
  put32(chunk.data() + 8 + data, static_cast<std::uint32_t>(crc));
  png.insert(png.begin() + static_cast<std::ptrdiff_t>(at), chunk.begin(), chunk.end());
}

}  // namespace

std::uint64_t png_min_bytes(ImageSize size) {
  // Signature, IHDR, one IDAT, IEND and a padding chunk, with deflate's all-zero image well
  // under a byte per 128 (runs of 258 bytes cost a few bits), plus a margin.
  const std::uint64_t raw = size.height * (size.width + 1);
  return 8 + 25 + 3 * kChunkFraming + 6 + raw / 128 + 64;
}

void encode_png_exact(ImageSize size, std::uint64_t bytes, ContentSource& content, std::vector<unsigned char>& pixels,
                      std::vector<unsigned char>& out) {
  const std::uint64_t count = size.height * size.width;
  pixels.resize(count);
  content.fill(pixels.data(), pixels.size());
  // What PNG adds to the pixels: a filter byte per row, zlib's header, checksum and stored-block
  // headers (5 bytes per 16 KiB of incompressible data at level 6), the chunks' framing.
  const std::uint64_t raw = size.height * (size.width + 1);
  const std::uint64_t framing = size.height + 8 + 25 + 3 * kChunkFraming + 6 + kChunkFraming * (raw / 65536 + 1) +
                                5 * (raw / 16384 + 1);
  std::uint64_t zeros = std::min(count, framing + 64);
  std::uint64_t zeroed = 0;
  for (;;) {
    std::memset(pixels.data() + zeroed, 0, zeros - zeroed);
    zeroed = zeros;
    encode_png(pixels.data(), size, out);
    if (out.size() == bytes) return;
    if (out.size() + kChunkFraming <= bytes) {
      insert_padding(out, bytes - out.size() - kChunkFraming, content);
      return;
    }
    if (zeros == count)
      throw internal_error("a PNG of " + std::to_string(bytes) + " bytes is below the least its size allows");
    zeros = std::min(count, zeros + (out.size() + kChunkFraming - bytes) + 64);
  }
}

}  // namespace trainio::format
