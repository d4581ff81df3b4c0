#pragma once
// A reusable buffer aligned for O_DIRECT, grown (never shrunk) as samples need.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

namespace trainio::storage {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  // At least `size` bytes aligned to `alignment` (a power of two); the contents are not kept.
  char* reserve(std::size_t size, std::size_t alignment) {
    if (size <= size_ && alignment <= alignment_) return data_;
    std::free(data_);
    data_ = nullptr;
    void* p = nullptr;
    if (::posix_memalign(&p, alignment, size ? size : alignment) != 0) throw std::bad_alloc();
    data_ = static_cast<char*>(p);
    size_ = size;
    alignment_ = alignment;
    return data_;
  }
  char* data() const { return data_; }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t alignment_ = 0;
};

// The alignment O_DIRECT needs for offsets and buffers of files at `path` (statx STATX_DIOALIGN
// where the kernel and file system report it, else the logical block size 4096).
struct DirectAlignment {
  std::size_t memory = 4096;
  std::size_t offset = 4096;
};
DirectAlignment direct_alignment(const std::string& path);

}  // namespace trainio::storage
