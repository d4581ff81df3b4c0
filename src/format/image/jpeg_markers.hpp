#pragma once
// The structure of a JPEG file, checked as the run reads it: the start-of-image marker, every
// segment with its length, the frame header (precision, size, components) against the plan, a
// scan header, entropy-coded data holding only stuffed bytes and restart markers, and the
// end-of-image marker as the file's last two bytes. It runs on bytes the reader read anyway, in
// whatever pieces they arrive, allocates nothing and decodes nothing (memchr over the coded
// data): the run measures the storage, not libjpeg. What only a decoder sees (bytes inserted
// inside the coded data, "Corrupt JPEG data") is left to `trainio validate`.

#include <cstddef>
#include <cstdint>

namespace trainio::format {

class JpegMarkers {
 public:
  // Before each file: the image size the plan gives it (8-bit grayscale).
  void start(std::uint64_t height, std::uint64_t width);
  // The file's next `n` bytes; nullptr, or what is wrong (valid until the next call).
  const char* feed(const unsigned char* p, std::size_t n);
  // After the file's last byte: nullptr when the image ended with its last two bytes.
  const char* finish();

 private:
  enum class State : unsigned char { soi0, soi1, marker, code, length0, length1, segment, entropy, entropy_ff, done };
  const char* on_marker(unsigned char code, std::uint64_t at);
  const char* end_segment(std::uint64_t at);
  const char* fail(std::uint64_t at, const char* what);

  std::uint64_t height_ = 0, width_ = 0;
  State state_ = State::soi0;
  std::uint64_t at_ = 0;  // bytes of the file before the current piece
  unsigned char code_ = 0;
  unsigned length_ = 0, left_ = 0, captured_ = 0;
  unsigned char head_[8] = {};  // the first bytes of a frame or scan header
  bool frame_ = false, scan_ = false;
  char message_[160] = {};
};

}  // namespace trainio::format
