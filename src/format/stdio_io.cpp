#include "format/stdio_io.hpp"

#include <unistd.h>

#include <cstring>

namespace trainio::format {

namespace {
constexpr std::size_t kBufsiz = 8192;  // glibc BUFSIZ
}

void StdioFile::fdopen_dup_of(storage::File& raw) {
  raw.duplicate_for_stdio_into(file_);
  size_ = 0;
  offset_ = 0;
  offset_known_ = false;
  read_ptr_ = read_end_ = 0;
}

void StdioFile::allocate() {
  if (size_ > 0) return;
  const auto block = file_.stat().block_size;
  size_ = block > 0 && block < kBufsiz ? block : kBufsiz;
  if (buffer_.size() < size_) buffer_.resize(size_);
}

std::uint64_t StdioFile::tell() {
  // glibc's ftell asks the kernel while the stream's offset is unknown, without recording it.
  if (!offset_known_) return file_.seek(0, SEEK_CUR) - (read_end_ - read_ptr_);
  return offset_ - (read_end_ - read_ptr_);
}

void StdioFile::seek(std::int64_t offset, int whence) {
  const bool never_filled = read_end_ == 0;  // glibc: _IO_read_base == _IO_read_end
  allocate();
  if (whence == SEEK_CUR && !offset_known_) {  // glibc's "dumb" path: straight to the kernel
    offset_ = file_.seek(offset - static_cast<std::int64_t>(read_end_ - read_ptr_), SEEK_CUR);
    offset_known_ = true;
    read_ptr_ = read_end_ = 0;
    return;
  }
  std::uint64_t target = static_cast<std::uint64_t>(offset);
  if (whence == SEEK_CUR) target = offset_ - (read_end_ - read_ptr_) + static_cast<std::uint64_t>(offset);
  // Inside what the buffer holds (strictly before the kernel offset): just move the pointer.
  if (offset_known_ && read_end_ > 0) {
    const std::uint64_t start = offset_ - read_end_;
    if (target >= start && target < offset_) {
      read_ptr_ = static_cast<std::size_t>(target - start);
      return;
    }
  }
  // Seek to the block boundary below the target, then read up to it.
  std::uint64_t aligned = target & ~static_cast<std::uint64_t>(size_ - 1);
  if (target - aligned > size_) aligned = target;
  offset_ = file_.seek(static_cast<std::int64_t>(aligned), SEEK_SET);
  offset_known_ = true;
  const auto delta = static_cast<std::size_t>(target - aligned);
  read_ptr_ = read_end_ = 0;
  // glibc reads exactly up to the target when the buffer was never filled, else a whole buffer.
  const std::size_t want = never_filled ? delta : size_;
  if (want == 0) return;
  const std::size_t got = file_.read_some(buffer_.data(), want);
  offset_ += got;
  read_end_ = got;
  read_ptr_ = delta < got ? delta : got;
}

std::size_t StdioFile::refill() {
  allocate();
  const std::size_t got = file_.read_some(buffer_.data(), size_);
  offset_ += got;
  read_ptr_ = 0;
  read_end_ = got;
  return got;
}

std::size_t StdioFile::read(void* dest_void, std::size_t n) {
  auto* dest = static_cast<char*>(dest_void);
  allocate();
  std::size_t done = 0;
  while (done < n) {
    const std::size_t have = read_end_ - read_ptr_;
    const std::size_t want = n - done;
    if (want <= have) {
      std::memcpy(dest + done, buffer_.data() + read_ptr_, want);
      read_ptr_ += want;
      return n;
    }
    if (have > 0) {
      std::memcpy(dest + done, buffer_.data() + read_ptr_, have);
      done += have;
      read_ptr_ = read_end_;
    }
    const std::size_t rest = n - done;
    if (rest < size_) {  // less than a buffer: refill and copy
      if (refill() == 0) break;
      continue;
    }
    // Whole buffers straight into the destination, keeping block alignment.
    read_ptr_ = read_end_ = 0;
    const std::size_t count = rest - rest % size_;
    const std::size_t got = file_.read_some(dest + done, count);
    if (got == 0) break;
    offset_ += got;
    done += got;
  }
  return done;
}

}  // namespace trainio::format
