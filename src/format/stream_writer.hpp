#pragma once
// Sequential file writing through one reusable buffer: format writers append headers and
// generated content, and the bytes reach storage in large writes. Content is generated straight
// into the buffer, so generation costs one pass over memory.

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "format/format.hpp"
#include "format/overlap.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

// A running checksum over appended bytes: the zip CRC-32 or TFRecord's CRC-32C.
struct Checksum {
  enum class Kind { crc32, crc32c } kind = Kind::crc32;
  std::uint32_t value = 0;
  void update(const void* data, std::size_t size);
};

class StreamWriter {
 public:
  // `buffer` is reused across files; it grows as bytes are appended, up to `chunk` bytes (a small
  // file never costs a chunk-sized buffer, zeroed and faulted in). With `beside`, content
  // longer than the buffer is generated a piece ahead (1 MiB, at most half the buffer) by `beside`
  // while the piece before it is written, so generating costs little time of its own.
  StreamWriter(storage::Output& out, util::Bytes& buffer, Overlap* beside = nullptr, std::size_t chunk = 4u << 20);

  // Each append updates `sum`, when given, over the appended bytes.
  void append(std::string_view bytes, Checksum* sum = nullptr);
  void append_zeros(std::uint64_t n, Checksum* sum = nullptr);
  void append_content(std::uint64_t n, ContentSource& content, Checksum* sum = nullptr);
  // Replaces appended bytes at `offset` (a header patched once its checksum is known) while they
  // are still in the buffer, so a small file reaches storage in one write; false when they have
  // gone to the file already (the caller then patches the file after the last flush).
  bool overwrite_buffered(std::uint64_t offset, std::string_view bytes);
  // Writes what is buffered; returns the total bytes written to the file so far.
  std::uint64_t flush();
  std::uint64_t position() const { return written_ + used_; }

 private:
  void grow_for(std::uint64_t n);  // grows the buffer toward `chunk_` for n more bytes
  char* reserve(std::size_t& n);   // room for up to n bytes; n shrinks to what fits
  // append_content() of more than the buffer holds, with the next piece generated beside the write.
  void append_content_overlapped(std::uint64_t n, ContentSource& content, Checksum* sum);
  std::size_t overlap_piece() const { return std::min<std::size_t>(buffer_.size() / 2, 1u << 20); }
  storage::Output& out_;
  util::Bytes& buffer_;
  Overlap* beside_;
  std::size_t chunk_;
  std::size_t base_ = 0;  // where the buffered bytes start in buffer_ (0, or its second half)
  std::size_t used_ = 0;
  std::uint64_t written_ = 0;
};

}  // namespace trainio::format
