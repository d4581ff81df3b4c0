#include "format/image/jpeg_markers.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace trainio::format {

namespace {

// SOF0..SOF15 but DHT (C4), JPG (C8) and DAC (CC), which share the range.
bool is_frame(unsigned char code) { return code >= 0xC0 && code <= 0xCF && code != 0xC4 && code != 0xC8 && code != 0xCC; }
constexpr unsigned char kSos = 0xDA, kSoi = 0xD8, kEoi = 0xD9;

}  // namespace

void JpegMarkers::start(std::uint64_t height, std::uint64_t width) {
  height_ = height;
  width_ = width;
  state_ = State::soi0;
  at_ = 0;
  frame_ = scan_ = false;
}

const char* JpegMarkers::fail(std::uint64_t at, const char* what) {
  std::snprintf(message_, sizeof message_, "%s at byte %llu", what, static_cast<unsigned long long>(at));
  return message_;
}

const char* JpegMarkers::feed(const unsigned char* p, std::size_t n) {
  std::size_t i = 0;
  while (i < n) {
    const std::uint64_t at = at_ + i;
    switch (state_) {
      case State::soi0:
      case State::soi1:
        if (p[i] != (state_ == State::soi0 ? 0xFF : kSoi)) return fail(at, "no JPEG start-of-image marker");
        state_ = state_ == State::soi0 ? State::soi1 : State::marker;
        ++i;
        break;
      case State::marker:
        if (p[i] != 0xFF) return fail(at, "no marker where the next segment starts");
        state_ = State::code;
        ++i;
        break;
      case State::code:
        ++i;
        if (p[i - 1] == 0xFF) break;  // fill bytes may precede a marker
        if (const char* problem = on_marker(p[i - 1], at)) return problem;
        break;
      case State::length0:
        length_ = static_cast<unsigned>(p[i++]) << 8;
        state_ = State::length1;
        break;
      case State::length1:
        length_ |= p[i++];
        if (length_ < 2) return fail(at, "a segment length below 2");
        left_ = length_ - 2;
        captured_ = 0;
        state_ = State::segment;
        if (left_ == 0)
          if (const char* problem = end_segment(at)) return problem;
        break;
      case State::segment: {
        const auto take = static_cast<unsigned>(std::min<std::size_t>(left_, n - i));
        const unsigned keep = std::min<unsigned>(take, static_cast<unsigned>(sizeof head_) - captured_);
        std::memcpy(head_ + captured_, p + i, keep);
        captured_ += keep;
        i += take;
        left_ -= take;
        if (left_ == 0)
          if (const char* problem = end_segment(at_ + i)) return problem;
        break;
      }
      case State::entropy: {
        // Coded data: 0xFF occurs only stuffed (FF 00), as a restart marker or before a marker.
        const void* ff = std::memchr(p + i, 0xFF, n - i);
        if (!ff) {
          i = n;
          break;
        }
        i = static_cast<std::size_t>(static_cast<const unsigned char*>(ff) - p) + 1;
        state_ = State::entropy_ff;
        break;
      }
      case State::entropy_ff: {
        const unsigned char c = p[i++];
        if (c == 0x00 || (c >= 0xD0 && c <= 0xD7)) state_ = State::entropy;
        else if (c == kEoi) state_ = State::done;
        else if (c != 0xFF)
          if (const char* problem = on_marker(c, at)) return problem;
        break;
      }
      case State::done: {
        std::snprintf(message_, sizeof message_, "%llu bytes after the end-of-image marker",
                      static_cast<unsigned long long>(n - i));
        return message_;
      }
    }
  }
  at_ += n;
  return nullptr;
}

const char* JpegMarkers::on_marker(unsigned char code, std::uint64_t at) {
  if (code == kEoi) {
    if (!scan_) return fail(at, "the end-of-image marker before any image data");
    state_ = State::done;
    return nullptr;
  }
  if (code == kSoi || code == 0x01 || (code >= 0xD0 && code <= 0xD7) || code == 0x00)
    return fail(at, "a marker out of place");
  code_ = code;
  state_ = State::length0;
  return nullptr;
}

const char* JpegMarkers::end_segment(std::uint64_t at) {
  state_ = State::marker;
  if (is_frame(code_)) {
    if (frame_) return fail(at, "a second frame header");
    if (captured_ < 6) return fail(at, "a frame header too short");
    const unsigned precision = head_[0], height = (head_[1] << 8) | head_[2], width = (head_[3] << 8) | head_[4],
                   components = head_[5];
    if (precision != 8 || height != height_ || width != width_ || components != 1 || length_ != 8 + 3 * components) {
      std::snprintf(message_, sizeof message_,
                    "the frame header says %ux%u pixels, %u-bit, %u components; expected %llux%llu 8-bit grayscale",
                    height, width, precision, components, static_cast<unsigned long long>(height_),
                    static_cast<unsigned long long>(width_));
      return message_;
    }
    frame_ = true;
  } else if (code_ == kSos) {
    if (!frame_) return fail(at, "a scan before the frame header");
    if (captured_ < 1 || head_[0] == 0 || length_ != 6 + 2u * head_[0]) return fail(at, "a malformed scan header");
    scan_ = true;
    state_ = State::entropy;
  }
  return nullptr;
}

const char* JpegMarkers::finish() {
  switch (state_) {
    case State::done: return nullptr;
    case State::soi0: return at_ == 0 ? "the file is empty" : fail(at_, "no JPEG start-of-image marker");
    case State::entropy:
    case State::entropy_ff: return fail(at_, "the file ends before the end-of-image marker");
    default: return fail(at_, "the file ends inside a header");
  }
}

}  // namespace trainio::format
