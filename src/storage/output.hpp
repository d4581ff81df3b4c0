#pragma once
// Where a writer's bytes go, whatever holds them. Format writers (data files, checkpoints) see
// only these interfaces; which storage holds the bytes is the engine's choice:
//  - a new file on a file system (storage/new_file.hpp): written under a temporary sibling name,
//    renamed into place when whole;
//  - an object in an object store would be an upload, completed when whole.
// The read side's counterpart is storage/read_engine.hpp.

#include <cstddef>
#include <cstdint>
#include <string>

namespace trainio::storage {

class Output {
 public:
  virtual ~Output() = default;
  // Writes all `size` bytes at `offset`. Writers go front to back, and may go back to patch a
  // header near the start whose checksum they only know at the end (zip's local headers).
  virtual void write_at(const void* data, std::size_t size, std::uint64_t offset) = 0;
};

// A data file or checkpoint being written: it takes its final name only when whole, so that no
// reader, and no later run resuming a dataset, takes part of one for the whole.
class NewObject : public Output {
 public:
  // Makes the object visible, whole, under its final name. Dropped without commit() (an error
  // while writing), it leaves nothing that could be read as the object.
  virtual void commit() = 0;
  // The path to write, for libraries that open files by name themselves (libhdf5, the
  // re-enactment of Python's open()); empty where the object is not a local file.
  virtual const std::string& local_path() const = 0;
};

}  // namespace trainio::storage
