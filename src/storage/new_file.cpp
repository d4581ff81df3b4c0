#include "storage/new_file.hpp"

#include "storage/fs.hpp"
#include "storage/sync_queue.hpp"
#include "util/paths.hpp"

namespace trainio::storage {

NewFile::NewFile(std::string path, NewFileOptions options)
    : path_(std::move(path)), writing_(options.in_place ? path_ : temp_path_for(path_)), options_(options) {
  if (options_.remove_leftover) remove_file(writing_);
  if (!options_.opened_by_library)
    file_ = File::open(writing_, {.access = options_.access, .direct = options_.direct});
}

NewFile::~NewFile() {
  if (committed_) return;
  file_ = File();  // closes without reporting: the error that dropped us is the one that matters
  try {
    remove_file(writing_);
  } catch (...) {
    // Left under its temporary name, which no reader takes for a data file or a result.
  }
}

void NewFile::write_at(const void* data, std::size_t size, std::uint64_t offset) {
  file_.pwrite_all(data, size, offset);
}

void NewFile::commit() {
  if (options_.sync) {
    // A library wrote and closed it: opened again (for reading: fdatasync needs no more).
    if (!file_.is_open()) file_ = File::open(writing_);
    options_.sync->commit(std::move(file_), writing_, path_);
    committed_ = true;  // the queue's now: it publishes it, or removes it if its sync fails
    return;
  }
  if (file_.is_open()) {
    if (options_.durable) file_.fsync();
    file_.close();
  }
  if (!options_.in_place) rename_path(writing_, path_);
  committed_ = true;
  // The rename is only durable once the folder's entry is: fsync the folder too.
  if (options_.durable) sync_folder(util::parent_of(path_), SyncScope::folder_entries);
}

}  // namespace trainio::storage
