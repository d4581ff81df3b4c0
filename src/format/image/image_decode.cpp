#include "format/image/image_decode.hpp"

#include <jpeglib.h>

#include <csetjmp>
#include <cstdio>
#include <exception>
#include <utility>

#include "util/error.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

// ---- JPEG ----

struct JpegDecoder::State {
  jpeg_decompress_struct d{};
  jpeg_error_mgr err{};
  jpeg_source_mgr src{};
  std::jmp_buf jump;
  ImageSource* source = nullptr;
  std::exception_ptr failure;  // what the source threw, rethrown once out of libjpeg
  char message[JMSG_LENGTH_MAX] = {};
  util::Bytes row;
};

namespace {

JpegDecoder::State& state_of(j_common_ptr info) { return *static_cast<JpegDecoder::State*>(info->client_data); }

// Errors, and warnings (msg_level -1: corrupt data, a premature end), leave libjpeg through the
// jump; trace messages (levels 0 and up) are dropped. Nothing is printed.
[[noreturn]] void jpeg_fail(j_common_ptr info) {
  auto& s = state_of(info);
  (*info->err->format_message)(info, s.message);
  std::longjmp(s.jump, 1);
}

void jpeg_message(j_common_ptr info, int level) {
  if (level < 0) jpeg_fail(info);
}

void jpeg_quiet(j_common_ptr) {}

void source_init(j_decompress_ptr) {}
void source_term(j_decompress_ptr) {}

boolean source_fill(j_decompress_ptr d) {
  auto& s = state_of(reinterpret_cast<j_common_ptr>(d));
  const unsigned char* data = nullptr;
  std::size_t n = 0;
  bool threw = false;
  try {
    n = s.source->next(data);
  } catch (...) {
    s.failure = std::current_exception();
    threw = true;
  }
  if (threw || n == 0) {
    // libjpeg would insert an end marker and warn; an image that ends early is an error.
    std::snprintf(s.message, sizeof s.message, "%s", threw ? "a read failed" : "the file ends before the image does");
    std::longjmp(s.jump, 1);
  }
  d->src->next_input_byte = data;
  d->src->bytes_in_buffer = n;
  return TRUE;
}

void source_skip(j_decompress_ptr d, long count) {
  if (count <= 0) return;
  auto n = static_cast<std::size_t>(count);
  while (n > d->src->bytes_in_buffer) {
    n -= d->src->bytes_in_buffer;
    source_fill(d);
  }
  d->src->next_input_byte += n;
  d->src->bytes_in_buffer -= n;
}

}  // namespace

JpegDecoder::JpegDecoder() : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.d.err = jpeg_std_error(&s.err);
  s.err.error_exit = jpeg_fail;
  s.err.emit_message = jpeg_message;
  s.err.output_message = jpeg_quiet;
  s.d.client_data = &s;
  if (setjmp(s.jump)) throw internal_error(std::string("libjpeg could not start a decoder: ") + s.message);
  jpeg_create_decompress(&s.d);
  s.d.client_data = &s;  // jpeg_create_decompress clears everything but err
  s.src.init_source = source_init;
  s.src.fill_input_buffer = source_fill;
  s.src.skip_input_data = source_skip;
  s.src.resync_to_restart = jpeg_resync_to_restart;
  s.src.term_source = source_term;
}

JpegDecoder::~JpegDecoder() { jpeg_destroy_decompress(&state_->d); }

const char* JpegDecoder::decode(ImageSource& source, DecodedImage& out) {
  // Between setjmp and a jump only libjpeg's frames and the callbacks above run; everything that
  // survives the jump lives in State.
  State& s = *state_;
  s.source = &source;
  s.failure = nullptr;
  s.src.next_input_byte = nullptr;
  s.src.bytes_in_buffer = 0;
  s.d.src = &s.src;
  if (setjmp(s.jump)) {
    jpeg_abort_decompress(&s.d);
    if (s.failure) std::rethrow_exception(std::exchange(s.failure, nullptr));
    return s.message;
  }
  jpeg_read_header(&s.d, TRUE);
  jpeg_start_decompress(&s.d);
  const std::size_t row_bytes = static_cast<std::size_t>(s.d.output_width) * static_cast<std::size_t>(s.d.output_components);
  if (s.row.size() < row_bytes) s.row.resize(row_bytes);  // once per reader, for the largest image
  JSAMPROW row = reinterpret_cast<JSAMPROW>(s.row.data());
  while (s.d.output_scanline < s.d.output_height) jpeg_read_scanlines(&s.d, &row, 1);
  out.height = s.d.output_height;
  out.width = s.d.output_width;
  out.components = s.d.output_components;
  jpeg_finish_decompress(&s.d);  // reads on to the end-of-image marker
  out.unread = s.src.bytes_in_buffer;
  return nullptr;
}

}  // namespace trainio::format
