#pragma once
// A result document written by streaming so that a crash leaves either the old file or the whole
// new one, never part of one: a storage::NewFile (a temporary sibling renamed into place by
// commit(), removed when dropped without it) that buffers small writes.

#include <string>
#include <string_view>

#include "storage/new_file.hpp"

namespace trainio::storage {

class AtomicFile {
 public:
  // durable: fsync the file before the rename and the folder after it (result documents);
  // otherwise a reader sees the old file, the new one or nothing, but a crash may lose both.
  AtomicFile(std::string path, bool durable);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends bytes (buffered: one write per buffer's worth).
  void write(std::string_view bytes);
  // Writes what is buffered, makes it durable if asked, and renames the file into place.
  void commit();

 private:
  void flush();
  NewFile file_;
  std::string buffer_;
  std::uint64_t offset_ = 0;
};

}  // namespace trainio::storage
