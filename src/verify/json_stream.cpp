#include "verify/json_stream.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <string_view>

#include "verify/json_view.hpp"

namespace trainio::verify {

namespace {

constexpr std::size_t kChunk = 16 * 1024;  // every rank has two streams open

bool space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

JsonStream::~JsonStream() {
  if (file_ != nullptr) std::fclose(file_);
}

bool JsonStream::open(const std::string& path, std::uint64_t offset) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) return false;
  if (offset > 0 && std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0) return false;
  file_offset_ = offset;
  return true;
}

void JsonStream::fail(const std::string& what) const { throw JsonError(fmt::format("{} at byte {}", what, offset())); }

bool JsonStream::fill() {
  if (file_ == nullptr) return false;
  // What was read is dropped: the buffer holds at most the value being read and a chunk.
  buffer_.erase(0, pos_);
  pos_ = 0;
  const std::size_t had = buffer_.size();
  buffer_.resize(had + kChunk);
  const std::size_t got = std::fread(buffer_.data() + had, 1, kChunk, file_);
  buffer_.resize(had + got);
  file_offset_ += got;
  return got > 0;
}

char JsonStream::peek() {
  while (true) {
    while (pos_ < buffer_.size() && space(buffer_[pos_])) ++pos_;
    if (pos_ < buffer_.size()) return buffer_[pos_];
    if (!fill()) return '\0';
  }
}

char JsonStream::get() {
  if (pos_ >= buffer_.size() && !fill()) fail("the text ends early");
  return buffer_[pos_++];
}

void JsonStream::enter(char open) {
  if (peek() != open) fail(fmt::format("'{}' expected", open));
  ++pos_;
  first_.push_back(true);
}

bool JsonStream::next(std::string* key) {
  if (first_.empty()) fail("no container entered");
  const bool object = key != nullptr;
  char c = peek();
  if (c == (object ? '}' : ']')) {
    ++pos_;
    first_.pop_back();
    return false;
  }
  if (!first_.back()) {
    if (c != ',') fail("',' expected");
    ++pos_;
    c = peek();
  }
  first_.back() = false;
  if (!object) return true;
  if (c != '"') fail("a key expected");
  ++pos_;
  key->clear();
  for (char k = get(); k != '"'; k = get()) {
    key->push_back(k);
    if (k == '\\') key->push_back(get());
  }
  if (peek() != ':') fail("':' expected");
  ++pos_;
  return true;
}

void JsonStream::value(std::string* text) {
  // The value's extent: a string to its closing quote, a container to its closing bracket (strings
  // inside skipped), a scalar to the next delimiter. JsonDoc checks the rest of its syntax. A
  // table and memchr skip what cannot end it: this scan runs over every byte verify reads.
  static const auto kind = [] {
    std::array<std::uint8_t, 256> k{};
    for (unsigned char c : std::string_view("{[")) k[c] = 1;
    for (unsigned char c : std::string_view("}]")) k[c] = 2;
    k['"'] = 3;
    for (unsigned char c : std::string_view(", \n\r\t")) k[c] = 4;
    return k;
  }();
  peek();
  std::size_t begin = pos_, at = pos_;
  int depth = 0;
  bool in_string = false, escaped = false, scalar = false;
  while (true) {
    if (at >= buffer_.size()) {
      // What was scanned is handed over (or skipped) before more is read: the buffer stays a chunk.
      if (text != nullptr) text->append(buffer_, begin, at - begin);
      pos_ = at;
      if (!fill()) {
        if (scalar && depth == 0) return;  // a scalar ending the file
        fail("the text ends early");
      }
      begin = at = pos_;
      continue;
    }
    const char* const base = buffer_.data();
    const std::size_t size = buffer_.size();
    if (in_string) {
      // To the closing quote: straight there when no backslash comes before it.
      const void* q = escaped ? nullptr : std::memchr(base + at, '"', size - at);
      if (q != nullptr && std::memchr(base + at, '\\', static_cast<std::size_t>(static_cast<const char*>(q) - base) - at) == nullptr) {
        at = static_cast<std::size_t>(static_cast<const char*>(q) - base) + 1;
        in_string = false;
        if (depth == 0) break;
        continue;
      }
      const char ch = base[at++];
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') {
        in_string = false;
        if (depth == 0) break;
      }
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(base[at]);
    switch (kind[c]) {
      case 0:
        if (depth == 0) scalar = true;
        ++at;
        continue;
      case 1:
        if (scalar) fail("a value expected");
        ++depth;
        ++at;
        continue;
      case 2:
        if (depth == 0) {
          if (scalar) break;
          fail("a value expected");
        }
        ++at;
        if (--depth == 0) break;
        continue;
      case 3:
        if (scalar) fail("a value expected");
        in_string = true;
        ++at;
        continue;
      default:  // a comma or whitespace
        if (depth == 0) {
          if (!scalar) fail("a value expected");
          break;
        }
        ++at;
        continue;
    }
    break;
  }
  if (text != nullptr) text->append(buffer_, begin, at - begin);
  pos_ = at;
}

void JsonStream::end() {
  if (peek() != '\0') fail("text after the document");
}

}  // namespace trainio::verify
