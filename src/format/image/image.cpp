#include "format/image/image.hpp"

#include <fmt/format.h>
#include <png.h>
#include <zlib.h>

#include <csetjmp>
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "format/image/image_decode.hpp"
#include "util/error.hpp"

namespace trainio::format {

ImageSize image_size(const plan::SampleShape& shape) {
  // A 1-D record becomes a single row; record_dims of 2 give height x width.
  if (shape.ndims >= 2) return {shape.dims[0], shape.dims[1]};
  return {1, shape.ndims == 1 ? shape.dims[0] : 1};
}

std::uint64_t image_file_bytes(const plan::DataFile& file) { return file.sample.bytes(); }

void check_image_sizes(ImageWriter::Codec codec, const plan::DatasetLayout& layout) {
  const bool jpeg = codec == ImageWriter::Codec::jpeg;
  const char* name = jpeg ? "JPEG" : "PNG";
  // Every file has the same size unless sizes vary: then each file's (O(files), as the plan's
  // total bytes are).
  for (const plan::Split split : {plan::Split::train, plan::Split::eval}) {
    const std::uint64_t count = layout.num_files(split);
    const std::uint64_t files = layout.sizes_vary() ? count : std::min<std::uint64_t>(1, count);
    for (std::uint64_t i = 0; i < files; ++i) {
      const plan::SampleShape shape = layout.sample_shape(split, i);
      const ImageSize size = image_size(shape);
      const std::uint64_t planned = shape.bytes();
      const std::string which = layout.sizes_vary() ? fmt::format("file {} of {} ", i, plan::split_folder(split)) : "";
      if (jpeg && (size.height > 65535 || size.width > 65535))
        throw config_error(fmt::format("dataset.format 'jpeg': {}an image of {}x{} pixels, but a JPEG side is at "
                                       "most 65535 pixels",
                                       which, size.height, size.width),
                           "give smaller images (record_length_bytes, record_dims), or use format png");
      const std::uint64_t least = jpeg ? jpeg_min_bytes(size) : png_min_bytes(size);
      if (planned < least)
        throw config_error(
            fmt::format("dataset.format '{}': {}an image of {}x{} pixels is planned as a file of {} bytes (one byte a "
                        "pixel), but a {} of that size takes at least {} bytes",
                        jpeg ? "jpeg" : "png", which, size.height, size.width, planned, name, least),
            layout.sizes_vary() ? "raise dataset.record_length_bytes or lower record_length_bytes_stdev, so that no "
                                  "file draws so small an image"
                                : "raise dataset.record_length_bytes (or record_dims), or use a format without "
                                  "headers for records this small (npy, indexed_binary)");
    }
  }
}

namespace {

Error not_the_image(const std::string& path, const char* codec, const std::string& what) {
  return data_error(fmt::format("'{}' is not the {} image the dataset's settings describe: {}", path, codec, what),
                    "the file is damaged or was written for other settings: regenerate the dataset with 'trainio generate' "
                    "(or check dataset.format)");
}

// What is wrong with a decoded image, against the size and mode the plan gives every file.
std::optional<std::string> decoded_problem(const DecodedImage& got, ImageSize want) {
  if (got.components != 1) return fmt::format("{} color components, expected grayscale", got.components);
  if (got.height != want.height || got.width != want.width)
    return fmt::format("{}x{} pixels, expected {}x{}", got.height, got.width, want.height, want.width);
  if (got.unread > 0) return fmt::format("{} bytes after the end of the image", got.unread);
  return std::nullopt;
}

}  // namespace

std::uint64_t ImageReader::read(const SampleRequest& r) {
  const std::string& path = *r.path;
  const plan::SampleShape& shape = r.shape;
  // Image.open: open the file, rewind, sniff 16 bytes (the first buffer fill).
  const ImageSize size = image_size(shape);
  file_.open(path);
  file_.seek(0, SEEK_SET);
  char prefix[16];
  file_.read(prefix, sizeof prefix);
  check_size(path, shape.bytes());
  if (codec_ == ImageWriter::Codec::jpeg) read_jpeg(path, size);
  else read_png(path, size);
  file_.close();  // Pillow closes the file it opened once the image is loaded
  return size.height * size.width;
}

void ImageReader::check_size(const std::string& path, std::uint64_t planned) const {
  // fstat's size at open, which Python's open() asks for anyway: no extra call.
  if (file_.file_size() != planned)
    throw not_the_image(path, codec_ == ImageWriter::Codec::jpeg ? "JPEG" : "PNG",
                        fmt::format("{} bytes, but the plan gives the file {}", file_.file_size(), planned));
}

void ImageReader::read_jpeg(const std::string& path, ImageSize want) {
  // The JPEG tile starts at offset 0: Pillow's decoder is fed the stream 64 KiB at a time up to
  // the file's size. The run walks the markers of what it read (JpegMarkers); decoding is left to
  // the framework's CPU time (reader.preprocess_time) and to `trainio validate`.
  file_.seek(0, SEEK_SET);
  jpeg_.start(want.height, want.width);
  std::uint64_t delivered = 0;
  while (delivered < file_.file_size()) {
    const std::size_t got = file_.read(block_.data(), block_.size());
    if (got == 0)
      throw not_the_image(path, "JPEG", fmt::format("{} bytes read, but the file's size was {} when it was opened",
                                                    delivered, file_.file_size()));
    delivered += got;
    if (const char* problem = jpeg_.feed(reinterpret_cast<const unsigned char*>(block_.data()), got))
      throw not_the_image(path, "JPEG", problem);
  }
  if (const char* problem = jpeg_.finish()) throw not_the_image(path, "JPEG", problem);
}

void ImageReader::read_png(const std::string& path, ImageSize want) {
  // PngImageFile: signature, then chunk headers (8 bytes and a tell()) until the first IDAT;
  // the decoder then pulls IDAT data in pieces of at most 64 KiB, crossing chunk boundaries by
  // reading the CRC and the next header; load_end reads up to IEND. What is read is checked on
  // the way (the header against the plan, every chunk's length and every CRC that is read: zlib's
  // crc32 runs at memory speed) and the file must end with IEND's CRC. The IDAT data is not
  // inflated here (that is the framework's CPU time, reader.preprocess_time): `trainio validate`
  // decodes it.
  auto u32 = [](const char* p) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(p[0])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(p[1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(p[2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(p[3]));
  };
  auto bad = [&](const std::string& what) { return not_the_image(path, "PNG", what); };
  auto crc_of = [](unsigned long crc, const char* p, std::size_t n) {
    return crc32(crc, reinterpret_cast<const Bytef*>(p), static_cast<uInt>(n));
  };
  file_.seek(0, SEEK_SET);
  char head[8];
  static const char kSignature[] = {'\x89', 'P', 'N', 'G', '\r', '\n', '\x1a', '\n'};
  if (file_.read(head, 8) != 8 || std::memcmp(head, kSignature, 8) != 0) throw bad("no PNG signature");
  std::uint64_t at = 8;
  char type[4];
  unsigned long crc = 0;
  auto next_chunk = [&](std::uint32_t& length) {
    char h[8];
    if (file_.read(h, 8) != 8) throw bad(fmt::format("cut short in a chunk header at byte {}", at));
    file_.tell();
    at += 8;
    length = u32(h);
    std::memcpy(type, h + 4, 4);
    crc = crc_of(crc32(0, nullptr, 0), type, 4);
  };
  auto check_crc = [&]() {
    char stored[4];
    if (file_.read(stored, 4) != 4) throw bad(fmt::format("cut short in a chunk CRC at byte {}", at));
    if (u32(stored) != static_cast<std::uint32_t>(crc)) throw bad(fmt::format("bad chunk CRC at byte {}", at));
    at += 4;
  };
  auto is = [&](const char* name) { return std::memcmp(type, name, 4) == 0; };
  std::uint32_t length = 0;
  bool header = false;
  for (next_chunk(length); !is("IDAT"); next_chunk(length)) {
    if (is("IEND")) throw bad("no image data");
    if (length > file_.file_size() - at) throw bad(fmt::format("a chunk at byte {} is longer than the file", at - 8));
    if (length > block_.size()) block_.resize(length);
    if (file_.read(block_.data(), length) != length) throw bad(fmt::format("cut short in a chunk at byte {}", at));
    at += length;
    crc = crc_of(crc, block_.data(), length);
    check_crc();
    if (is("IHDR")) {
      const char* h = block_.data();
      auto byte = [&](std::uint32_t need, int at) { return length >= need ? static_cast<unsigned char>(h[at]) + 0 : 0; };
      // width, height, bit depth 8, color type 0 (gray), compression, filter, interlace 0
      if (length != 13 || u32(h) != want.width || u32(h + 4) != want.height || h[8] != 8 || h[9] != 0 || h[12] != 0)
        throw bad(fmt::format("the header says {}x{} pixels, depth {}, color type {}, interlace {}; expected {}x{} "
                              "8-bit grayscale, not interlaced",
                              length >= 8 ? u32(h + 4) : 0, length >= 8 ? u32(h) : 0, byte(9, 8), byte(10, 9),
                              byte(13, 12), want.height, want.width));
      header = true;
    }
  }
  if (!header) throw bad("no IHDR chunk before the image data");
  if (length > file_.file_size() - at) throw bad(fmt::format("a chunk at byte {} is longer than the file", at - 8));
  std::uint64_t idat_left = length;
  bool more = true;
  while (more) {
    while (idat_left == 0) {
      check_crc();
      std::uint32_t next = 0;
      next_chunk(next);
      if (!is("IDAT")) {
        more = false;  // IEND (load_end has nothing left to read)
        if (!is("IEND") || next != 0) throw bad(fmt::format("no IEND chunk after the image data at byte {}", at - 8));
        break;
      }
      if (next > file_.file_size() - at)
        throw bad(fmt::format("a chunk at byte {} is longer than the file", at - 8));
      idat_left = next;
    }
    if (!more) break;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kDecoderBlock, idat_left));
    if (file_.read(block_.data(), n) != n) throw bad(fmt::format("cut short in image data at byte {}", at));
    at += n;
    idat_left -= n;
    crc = crc_of(crc, block_.data(), n);
  }
  // IEND's CRC is not read (Pillow stops at its header): the file must hold exactly that much more.
  if (file_.file_size() != at + 4) throw bad(fmt::format("{} bytes, expected {}", file_.file_size(), at + 4));
}

ImageWriter::ImageWriter(Codec codec) : codec_(codec) {
  if (codec == Codec::jpeg) jpeg_ = std::make_unique<JpegEncoder>();
}

void ImageWriter::write_bytes(const plan::DataFile& f, storage::Output& out, ContentSource& content) {
  const ImageSize size = image_size(f.sample);
  if (codec_ == Codec::jpeg) jpeg_->encode(size, image_file_bytes(f), content, encoded_);
  else encode_png_exact(size, image_file_bytes(f), content, pixels_, encoded_);
  out.write_at(encoded_.data(), encoded_.size(), 0);
}

namespace {

class MemorySource final : public ImageSource {
 public:
  explicit MemorySource(const std::vector<unsigned char>& bytes) : bytes_(bytes) {}
  std::size_t next(const unsigned char*& data) override {
    if (done_) return 0;
    done_ = true;
    data = bytes_.data();
    return bytes_.size();
  }

 private:
  const std::vector<unsigned char>& bytes_;
  bool done_ = false;
};

std::optional<std::string> check_jpeg(const std::vector<unsigned char>& bytes, ImageSize want) {
  JpegDecoder decoder;
  MemorySource source(bytes);
  DecodedImage got;
  if (const char* problem = decoder.decode(source, got)) return std::string("not a decodable JPEG: ") + problem;
  return decoded_problem(got, want);
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

// libpng's errors and warnings (a bad CRC, extra data) leave the decoder through its jump with
// the message kept; its default handlers would print them.
struct PngMessage {
  char text[200] = "not a decodable PNG";
};

[[noreturn]] void png_fail(png_structp png, png_const_charp message) {
  auto* m = static_cast<PngMessage*>(png_get_error_ptr(png));
  std::snprintf(m->text, sizeof m->text, "not a decodable PNG: %s", message);
  png_longjmp(png, 1);
}

std::optional<std::string> check_png(const std::vector<unsigned char>& bytes, ImageSize want) {
  PngMessage message;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &message, png_fail, png_fail);
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
    return std::string(message.text);
  }
  png_set_read_fn(png, &src, png_from_vector);
  png_read_info(png, info);
  const auto width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  const int type = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  row = static_cast<png_bytep>(png_malloc(png, png_get_rowbytes(png, info)));
  for (png_uint_32 y = 0; y < height; ++y) png_read_row(png, row, nullptr);
  png_read_end(png, nullptr);
  const std::size_t unread = bytes.size() - src.at;
  png_free(png, row);
  png_destroy_read_struct(&png, &info, nullptr);
  if (type != PNG_COLOR_TYPE_GRAY || depth != 8) return std::string("not 8-bit grayscale");
  if (height != want.height || width != want.width)
    return fmt::format("{}x{} pixels, expected {}x{}", height, width, want.height, want.width);
  if (unread > 0) return fmt::format("{} bytes after the end of the image", unread);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate_image(const plan::DataFile& f, ImageWriter::Codec codec) {
  storage::File in = storage::File::open(f.path);
  std::vector<unsigned char> bytes(in.size());
  if (!bytes.empty()) in.pread_exact(bytes.data(), bytes.size(), 0);
  auto problem = codec == ImageWriter::Codec::jpeg ? check_jpeg(bytes, image_size(f.sample))
                                                   : check_png(bytes, image_size(f.sample));
  if (!problem && bytes.size() != image_file_bytes(f))
    problem = fmt::format("{} bytes, but the plan gives the file {}", bytes.size(), image_file_bytes(f));
  return problem;
}

}  // namespace trainio::format
