#include "format/stream_writer.hpp"

#include <algorithm>
#include <cstring>

#include "format/crc32c.hpp"
#include "format/archive/zip.hpp"
#include "util/kernel_touch.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

void Checksum::update(const void* data, std::size_t size) {
  value = kind == Kind::crc32 ? zip::crc32(value, data, size) : crc32c::extend(value, data, size);
}

void ContentSource::fill_crc32(void* data, std::size_t size, std::uint32_t& crc) {
  fill(data, size);
  crc = zip::crc32(crc, data, size);
}

namespace {

// Content into `at`, summed into `sum` when given: the source sums a zip CRC-32 itself (it may
// know it without reading the bytes back).
void fill_summed(ContentSource& content, char* at, std::size_t n, Checksum* sum) {
  if (sum && sum->kind == Checksum::Kind::crc32) {
    content.fill_crc32(at, n, sum->value);
    return;
  }
  content.fill(at, n);
  if (sum) sum->update(at, n);
}

}  // namespace

void ByteWriter::prepare(const plan::DataFile& file) {
  const std::uint64_t size = expected_size(file).value_or(StreamWriter::kChunk);
  const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(std::max<std::uint64_t>(size, 1), StreamWriter::kChunk));
  if (buffer_.size() >= wanted) return;
  util::resize_touched(buffer_, wanted);  // every page touched now, by the kernel too
}

bool ByteWriter::fits_stream_buffer(const plan::DataFile& file) const {
  const auto size = expected_size(file);
  return size && *size <= StreamWriter::kChunk;
}

StreamWriter::StreamWriter(storage::Output& out, util::Bytes& buffer, Overlap* beside, std::size_t chunk)
    : out_(out), buffer_(buffer), beside_(beside), chunk_(chunk) {}

void StreamWriter::grow_for(std::uint64_t n) {
  const std::uint64_t wanted = base_ + used_ + n;
  if (wanted <= buffer_.size() || buffer_.size() >= chunk_) return;
  constexpr std::uint64_t kStep = 64 * 1024;  // at least double, in whole 64 KiB steps
  const std::uint64_t size = std::max<std::uint64_t>(2 * buffer_.size(), (wanted + kStep - 1) / kStep * kStep);
  buffer_.resize(static_cast<std::size_t>(std::min<std::uint64_t>(size, chunk_)));
}

char* StreamWriter::reserve(std::size_t& n) {
  if (base_ + used_ == buffer_.size()) flush();
  const std::size_t room = buffer_.size() - base_ - used_;
  if (n > room) n = room;
  return buffer_.data() + base_ + used_;
}

void StreamWriter::append(std::string_view bytes, Checksum* sum) {
  grow_for(bytes.size());
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
  grow_for(total);
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
  grow_for(total);
  if (beside_ && base_ == 0 && used_ < overlap_piece() && total > buffer_.size() - used_) {
    append_content_overlapped(total, content, sum);
    return;
  }
  while (total > 0) {
    std::size_t n = total > buffer_.size() ? buffer_.size() : static_cast<std::size_t>(total);
    char* at = reserve(n);
    fill_summed(content, at, n, sum);
    used_ += n;
    total -= n;
  }
}

void StreamWriter::append_content_overlapped(std::uint64_t total, ContentSource& content, Checksum* sum) {
  // Pieces in file order, each generated (and checksummed) after the one before it: the content
  // source and the checksum see the bytes in the same order as without overlap. Only the first
  // piece is generated before anything is written, so smaller pieces overlap more of a file.
  const std::size_t piece = overlap_piece();
  auto generate = [&content, sum](char* at, std::size_t n) { fill_summed(content, at, n, sum); };
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

char* StreamWriter::append_in_place(std::size_t n) {
  grow_for(n);
  if (n > 0 && base_ + used_ == buffer_.size()) flush();  // as append() would: a full buffer is written first
  if (n > buffer_.size() - base_ - used_) return nullptr;
  char* at = buffer_.data() + base_ + used_;
  used_ += n;
  return at;
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
