#pragma once
// A new file on a file system, as a storage::NewObject: written under a temporary sibling name
// (temp_path_for) and renamed into place by commit(); dropped without commit() it is removed.
// One implementation of the commit protocol for data files, their indexes, checkpoints and
// result documents.

#include <string>

#include "storage/file.hpp"
#include "storage/output.hpp"

namespace trainio::storage {

class SyncQueue;

struct NewFileOptions {
  // Written under its final name, with no rename (DLIO's checkpoints with atomic_files off, data
  // files written in one call); dropped without commit() it is still removed.
  bool in_place = false;
  // Unlink a temporary an interrupted run may have left before creating the file (write_new
  // would refuse it; the generator skips the call when no temporary can be there).
  bool remove_leftover = false;
  // A library opens the file by name (local_path()) and writes and closes it itself: this object
  // only names, renames or removes it. Otherwise it opens the file at once with `access`.
  bool opened_by_library = false;
  Access access = Access::write_new;
  bool direct = false;  // O_DIRECT
  // fsync the file before the rename and its folder after it (result documents): a crash then
  // leaves the old file or the new one. Otherwise a crash may lose both.
  bool durable = false;
  // commit() hands the file to this queue, which fdatasyncs it, then closes and renames it
  // (generated data files and their indexes: durable before they take their names, the folders
  // after the last one, without the writer waiting for each file).
  SyncQueue* sync = nullptr;
};

class NewFile final : public NewObject {
 public:
  explicit NewFile(std::string path, NewFileOptions options = {});
  ~NewFile() override;
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;

  void write_at(const void* data, std::size_t size, std::uint64_t offset) override;
  // Closes the file (reporting a failing close, which can carry a deferred write error), then
  // renames it into place; with a sync queue, hands it over to be synced, closed and renamed.
  void commit() override;
  const std::string& local_path() const override { return writing_; }
  // The open handle, for writers that need more than write_at (O_DIRECT's unaligned tail, fsync).
  File& file() { return file_; }

 private:
  std::string path_, writing_;
  NewFileOptions options_;
  File file_;
  bool committed_ = false;
};

}  // namespace trainio::storage
