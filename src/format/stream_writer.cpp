#include "format/stream_writer.hpp"

#include <algorithm>
#include <cstring>

#include "format/crc32c.hpp"
#include "format/zip.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

void Checksum::update(const void* data, std::size_t size) {
  value = kind == Kind::crc32 ? zip::crc32(value, data, size) : crc32c::extend(value, data, size);
}

StreamWriter::StreamWriter(storage::Output& out, util::Bytes& buffer, Overlap* beside, std::size_t chunk)
    : out_(out), buffer_(buffer), beside_(beside) {
  if (buffer_.size() < chunk) buffer_.resize(chunk);
}

char* StreamWriter::reserve(std::size_t& n) {
  if (base_ + used_ == buffer_.size()) flush();
  const std::size_t room = buffer_.size() - base_ - used_;
  if (n > room) n = room;
  return buffer_.data() + base_ + used_;
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
  if (beside_ && base_ == 0 && used_ < overlap_piece() && total > buffer_.size() - used_) {
    append_content_overlapped(total, content, sum);
    return;
  }
  while (total > 0) {
    std::size_t n = total > buffer_.size() ? buffer_.size() : static_cast<std::size_t>(total);
    char* at = reserve(n);
    content.fill(at, n);
    if (sum) sum->update(at, n);
    used_ += n;
    total -= n;
  }
}

void StreamWriter::append_content_overlapped(std::uint64_t total, ContentSource& content, Checksum* sum) {
  // Pieces in file order, each generated (and checksummed) after the one before it: the content
  // source and the checksum see the bytes in the same order as without overlap. Only the first
  // piece is generated before anything is written, so smaller pieces overlap more of a file.
  const std::size_t piece = overlap_piece();
  auto generate = [&content, sum](char* at, std::size_t n) {
    content.fill(at, n);
    if (sum) sum->update(at, n);
  };
  std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(total, piece - used_));
  generate(buffer_.data() + used_, first);
  used_ += first;
  total -= first;
  while (total > 0) {
    const std::size_t next = static_cast<std::size_t>(std::min<std::uint64_t>(total, piece));
    const std::size_t spare = base_ == 0 ? piece : 0;
    write_beside(*beside_, [&generate, at = buffer_.data() + spare, next] { generate(at, next); },
                 [&] { out_.write_at(buffer_.data() + base_, used_, written_); });
    written_ += used_;
    base_ = spare;
    used_ = next;
    total -= next;
  }
}

bool StreamWriter::overwrite_buffered(std::uint64_t offset, std::string_view bytes) {
  if (offset < written_ || offset + bytes.size() > written_ + used_) return false;
  std::memcpy(buffer_.data() + base_ + (offset - written_), bytes.data(), bytes.size());
  return true;
}

std::uint64_t StreamWriter::flush() {
  if (used_ > 0) {
    out_.write_at(buffer_.data() + base_, used_, written_);
    written_ += used_;
    used_ = 0;
  }
  base_ = 0;
  return written_;
}

}  // namespace trainio::format
