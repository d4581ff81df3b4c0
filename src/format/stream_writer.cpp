#include "format/stream_writer.hpp"

#include <cstring>

#include "format/crc32c.hpp"
#include "format/zip.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

void Checksum::update(const void* data, std::size_t size) {
  value = kind == Kind::crc32 ? zip::crc32(value, data, size) : crc32c::extend(value, data, size);
}

StreamWriter::StreamWriter(storage::File& out, util::Bytes& buffer, std::size_t chunk)
    : out_(out), buffer_(buffer) {
  if (buffer_.size() < chunk) buffer_.resize(chunk);
}

char* StreamWriter::reserve(std::size_t& n) {
  if (used_ == buffer_.size()) flush();
  const std::size_t room = buffer_.size() - used_;
  if (n > room) n = room;
  return buffer_.data() + used_;
}

void StreamWriter::append(std::string_view bytes, Checksum* sum) {
  while (!bytes.empty()) {
    std::size_t n = bytes.size();
    char* at = reserve(n);
    std::memcpy(at, bytes.data(), n);
    if (sum) sum->update(at, n);
    used_ += n;
    bytes.remove_prefix(n);
  }
}

void StreamWriter::append_zeros(std::uint64_t total, Checksum* sum) {
  while (total > 0) {
    std::size_t n = total > buffer_.size() ? buffer_.size() : static_cast<std::size_t>(total);
    char* at = reserve(n);
    std::memset(at, 0, n);
    if (sum) sum->update(at, n);
    used_ += n;
    total -= n;
  }
}

void StreamWriter::append_content(std::uint64_t total, ContentSource& content, Checksum* sum) {
  while (total > 0) {
    std::size_t n = total > buffer_.size() ? buffer_.size() : static_cast<std::size_t>(total);
    char* at = reserve(n);
    content.fill(at, n);
    if (sum) sum->update(at, n);
    used_ += n;
    total -= n;
  }
}

std::uint64_t StreamWriter::flush() {
  if (used_ > 0) {
    out_.pwrite_all(buffer_.data(), used_, written_);
    written_ += used_;
    used_ = 0;
  }
  return written_;
}

}  // namespace trainio::format
