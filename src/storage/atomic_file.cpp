#include "storage/atomic_file.hpp"

namespace trainio::storage {

namespace {
constexpr std::size_t kBufferBytes = 1 << 20;
}

AtomicFile::AtomicFile(std::string path, bool durable)
    : file_(std::move(path), {.remove_leftover = true, .durable = durable}) {  // a leftover: an interrupted earlier write
  buffer_.reserve(kBufferBytes);
}

void AtomicFile::write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > kBufferBytes) flush();
  if (bytes.size() >= kBufferBytes) {
    file_.write_at(bytes.data(), bytes.size(), offset_);
    offset_ += bytes.size();
    return;
  }
  buffer_.append(bytes);
}

void AtomicFile::flush() {
  if (buffer_.empty()) return;
  file_.write_at(buffer_.data(), buffer_.size(), offset_);
  offset_ += buffer_.size();
  buffer_.clear();
}

void AtomicFile::commit() {
  flush();
  file_.commit();
}

}  // namespace trainio::storage
