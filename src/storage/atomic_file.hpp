#pragma once
// A file written by streaming so that a crash leaves either the old file or the whole new one,
// never part of one: written under a temporary sibling name (temp_path_for), renamed into place
// by commit(). Dropped without commit() (an error while writing), the temporary file is removed.

#include <string>
#include <string_view>

#include "storage/file.hpp"

namespace trainio::storage {

class AtomicFile {
 public:
  // durable: fsync the file before the rename and the folder after it (result documents);
  // otherwise a reader sees the old file, the new one or nothing, but a crash may lose both.
  AtomicFile(std::string path, bool durable);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends bytes (buffered: one write per buffer's worth).
  void write(std::string_view bytes);
  // Writes what is buffered, makes it durable if asked, and renames the file into place.
  void commit();

 private:
  void flush();
  std::string path_, temp_;
  bool durable_;
  File file_;
  std::string buffer_;
  std::uint64_t offset_ = 0;
  bool committed_ = false;
};

}  // namespace trainio::storage
