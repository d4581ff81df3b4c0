#include "storage/atomic_file.hpp"

#include "storage/fs.hpp"
#include "util/paths.hpp"

namespace trainio::storage {

namespace {
constexpr std::size_t kBufferBytes = 1 << 20;
}

AtomicFile::AtomicFile(std::string path, bool durable)
    : path_(std::move(path)), temp_(temp_path_for(path_)), durable_(durable) {
  remove_file(temp_);  // left over from an interrupted earlier write
  file_ = File::open(temp_, {.access = Access::write_new});
  buffer_.reserve(kBufferBytes);
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  file_ = File();  // closes without reporting: the error that dropped us is the one that matters
  try {
    remove_file(temp_);
  } catch (...) {
    // Left under its temporary name, which is never read as a result.
  }
}

void AtomicFile::write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > kBufferBytes) flush();
  if (bytes.size() >= kBufferBytes) {
    file_.pwrite_all(bytes.data(), bytes.size(), offset_);
    offset_ += bytes.size();
    return;
  }
  buffer_.append(bytes);
}

void AtomicFile::flush() {
  if (buffer_.empty()) return;
  file_.pwrite_all(buffer_.data(), buffer_.size(), offset_);
  offset_ += buffer_.size();
  buffer_.clear();
}

void AtomicFile::commit() {
  flush();
  if (durable_) file_.fsync();
  file_.close();
  rename_path(temp_, path_);
  committed_ = true;
  // The rename is only durable once the folder's entry is: fsync the folder too.
  if (durable_) sync_folder(util::parent_of(path_), SyncScope::folder_entries);
}

}  // namespace trainio::storage
