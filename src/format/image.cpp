#include "format/image.hpp"

#include <fmt/format.h>
#include <jpeglib.h>
#include <png.h>

#include <csetjmp>
#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace trainio::format {

ImageSize image_size(const plan::SampleShape& shape) {
  // A 1-D record becomes a single row; record_dims of 2 give height x width.
  if (shape.ndims >= 2) return {shape.dims[0], shape.dims[1]};
  return {1, shape.ndims == 1 ? shape.dims[0] : 1};
}

namespace {

// libjpeg reports errors through a callback that must not return: jump back out instead.
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_fail(j_common_ptr info) {
  auto* err = reinterpret_cast<JpegError*>(info->err);
  (*info->err->format_message)(info, err->message);
  std::longjmp(err->jump, 1);
}

void encode_jpeg(const unsigned char* pixels, ImageSize size, std::vector<unsigned char>& out) {
  jpeg_compress_struct c{};
  JpegError err{};
  c.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  // libjpeg writes these through pointers after setjmp: volatile-qualified storage is not
  // needed because they are only read through memory (their addresses escape to libjpeg).
  unsigned char* mem = nullptr;
  unsigned long mem_size = 0;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&c);
    std::free(mem);
    throw internal_error(std::string("libjpeg failed to encode: ") + err.message);
  }
  jpeg_create_compress(&c);
  jpeg_mem_dest(&c, &mem, &mem_size);
  c.image_width = static_cast<JDIMENSION>(size.width);
  c.image_height = static_cast<JDIMENSION>(size.height);
  c.input_components = 1;
  c.in_color_space = JCS_GRAYSCALE;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 75, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<unsigned char*>(pixels + static_cast<std::size_t>(c.next_scanline) * size.width);
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  out.assign(mem, mem + mem_size);
  jpeg_destroy_compress(&c);
  std::free(mem);
}

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

}  // namespace

std::uint64_t ImageReader::read(const std::string& path, const plan::SampleShape& shape, std::uint64_t,
                                std::uint64_t) {
  // Image.open: open the file, rewind, sniff 16 bytes (the first buffer fill).
  file_.open(path);
  file_.seek(0, SEEK_SET);
  char prefix[16];
  file_.read(prefix, sizeof prefix);
  if (codec_ == ImageWriter::Codec::jpeg) read_jpeg();
  else read_png(path);
  file_.close();  // Pillow closes the file it opened once the image is loaded
  const ImageSize size = image_size(shape);
  return size.height * size.width;
}

void ImageReader::read_jpeg() {
  // The JPEG tile starts at offset 0: libjpeg is fed the whole stream, 64 KiB at a time, until
  // it has seen all of it.
  file_.seek(0, SEEK_SET);
  std::uint64_t total = 0;
  while (total < file_.file_size()) {
    const std::size_t got = file_.read(block_.data(), kDecoderBlock);
    if (got == 0) break;
    total += got;
  }
}

void ImageReader::read_png(const std::string& path) {
  // PngImageFile: signature, then chunk headers (8 bytes and a tell()) until the first IDAT;
  // the decoder then pulls IDAT data in pieces of at most 64 KiB, crossing chunk boundaries by
  // reading the CRC and the next header; load_end reads up to IEND.
  auto u32 = [](const char* p) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(p[0])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(p[1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(p[2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(p[3]));
  };
  auto bad = [&](const char* what) {
    return data_error(fmt::format("'{}' is not a valid PNG file: {}", path, what),
                      "regenerate the dataset with 'trainio generate' (or check dataset.format)");
  };
  file_.seek(0, SEEK_SET);
  char head[8];
  static const char kSignature[] = {'\x89', 'P', 'N', 'G', '\r', '\n', '\x1a', '\n'};
  if (file_.read(head, 8) != 8 || std::memcmp(head, kSignature, 8) != 0) throw bad("no PNG signature");
  auto next_chunk = [&](std::uint32_t& length) -> std::string {
    char h[8];
    if (file_.read(h, 8) != 8) throw bad("cut short in a chunk header");
    file_.tell();
    length = u32(h);
    return std::string(h + 4, 4);
  };
  std::uint32_t length = 0;
  for (std::string type = next_chunk(length); type != "IDAT"; type = next_chunk(length)) {
    if (type == "IEND") throw bad("no image data");
    if (length > block_.size()) block_.resize(length);
    if (file_.read(block_.data(), length) != length) throw bad("cut short in a chunk");
    char crc[4];
    file_.read(crc, 4);
  }
  std::uint64_t idat_left = length;
  bool more = true;
  while (more) {
    while (idat_left == 0) {
      char crc[4];
      file_.read(crc, 4);
      std::uint32_t next = 0;
      if (next_chunk(next) != "IDAT") {
        more = false;  // IEND (load_end has nothing left to read)
        break;
      }
      idat_left = next;
    }
    if (!more) break;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kDecoderBlock, idat_left));
    if (file_.read(block_.data(), n) != n) throw bad("cut short in image data");
    idat_left -= n;
  }
}

void ImageWriter::write_bytes(const plan::DataFile& f, storage::File& out, ContentSource& content) {
  const ImageSize size = image_size(f.sample);
  pixels_.resize(size.height * size.width);
  content.fill(pixels_.data(), pixels_.size());
  if (codec_ == Codec::jpeg) encode_jpeg(pixels_.data(), size, encoded_);
  else encode_png(pixels_.data(), size, encoded_);
  out.pwrite_all(encoded_.data(), encoded_.size(), 0);
}

namespace {

std::optional<std::string> check_jpeg(const std::vector<unsigned char>& bytes, ImageSize want) {
  jpeg_decompress_struct d{};
  JpegError err{};
  d.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&d);
    return std::string("not a decodable JPEG: ") + err.message;
  }
  jpeg_create_decompress(&d);
  jpeg_mem_src(&d, bytes.data(), bytes.size());
  jpeg_read_header(&d, TRUE);
  jpeg_start_decompress(&d);
  // The row lives in libjpeg's pool, so a jump out of the decoder leaks nothing; no C++ object
  // with a destructor is created until decoding is over.
  JSAMPARRAY row = (*d.mem->alloc_sarray)(reinterpret_cast<j_common_ptr>(&d), JPOOL_IMAGE,
                                          d.output_width * static_cast<JDIMENSION>(d.output_components), 1);
  while (d.output_scanline < d.output_height) jpeg_read_scanlines(&d, row, 1);
  const int components = d.output_components;
  const JDIMENSION height = d.output_height, width = d.output_width;
  jpeg_finish_decompress(&d);
  jpeg_destroy_decompress(&d);
  if (components != 1) return fmt::format("{} color components, expected grayscale", components);
  if (height != want.height || width != want.width)
    return fmt::format("{}x{} pixels, expected {}x{}", height, width, want.height, want.width);
  return std::nullopt;
}

struct PngSource {
  const std::vector<unsigned char>* bytes;
  std::size_t at = 0;
};

void png_from_vector(png_structp png, png_bytep out, png_size_t length) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (src->at + length > src->bytes->size()) png_error(png, "the file ends early");
  std::memcpy(out, src->bytes->data() + src->at, length);
  src->at += length;
}

std::optional<std::string> check_png(const std::vector<unsigned char>& bytes, ImageSize want) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_read_struct(&png, &info, nullptr);
    throw internal_error("libpng could not start a decoder");
  }
  PngSource src{&bytes};
  png_bytep volatile row = nullptr;  // set after setjmp: volatile keeps it valid after a jump
  if (setjmp(png_jmpbuf(png))) {
    png_free(png, row);
    png_destroy_read_struct(&png, &info, nullptr);
    return std::string("not a decodable PNG");
  }
  png_set_read_fn(png, &src, png_from_vector);
  png_read_info(png, info);
  const auto width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  const int type = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  row = static_cast<png_bytep>(png_malloc(png, png_get_rowbytes(png, info)));
  for (png_uint_32 y = 0; y < height; ++y) png_read_row(png, row, nullptr);
  png_read_end(png, nullptr);
  png_free(png, row);
  png_destroy_read_struct(&png, &info, nullptr);
  if (type != PNG_COLOR_TYPE_GRAY || depth != 8) return std::string("not 8-bit grayscale");
  if (height != want.height || width != want.width)
    return fmt::format("{}x{} pixels, expected {}x{}", height, width, want.height, want.width);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate_image(const plan::DataFile& f, ImageWriter::Codec codec) {
  storage::File in = storage::File::open(f.path);
  std::vector<unsigned char> bytes(in.size());
  if (!bytes.empty()) in.pread_exact(bytes.data(), bytes.size(), 0);
  return codec == ImageWriter::Codec::jpeg ? check_jpeg(bytes, image_size(f.sample)) : check_png(bytes, image_size(f.sample));
}

}  // namespace trainio::format
