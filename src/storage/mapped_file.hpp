#pragma once
// A read-only memory map of a whole file (MAP_SHARED, as numpy.memmap makes it). Reading mapped
// bytes makes the page faults that do the storage I/O; touch() reads one byte per page of a
// range so that the bytes are really fetched (DLIO's mmap reader takes a view and never does).

#include <cstddef>
#include <cstdint>
#include <string>

#include "storage/file.hpp"

namespace trainio::storage {

class MappedFile {
 public:
  MappedFile() = default;
  // Maps `path` as numpy.memmap(path, mode='r') does: Python open (fstat, ioctl, lseeks for the
  // size), dup of the descriptor for the map, mmap, close of the file object.
  static MappedFile open(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::uint64_t size() const { return size_; }
  const unsigned char* data() const { return data_; }
  // Reads one byte of every page in [offset, offset + length); returns a checksum so that the
  // reads cannot be optimised away. A range past the end is a dataset error.
  std::uint64_t touch(std::uint64_t offset, std::uint64_t length) const;

 private:
  void release() noexcept;
  std::string path_;
  const unsigned char* data_ = nullptr;
  std::uint64_t size_ = 0;
  mutable File kept_;  // touches are reported as its reads. Python's mmap keeps its dup'ed descriptor for the life of the map
};

}  // namespace trainio::storage
