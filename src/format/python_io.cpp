#include "format/python_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace trainio::format {

namespace {
constexpr std::size_t kDefaultBufferSize = 8192;  // io.DEFAULT_BUFFER_SIZE
}

void PyBufferedFile::open(const std::string& path) {
  file_.reopen(path);
  const auto st = file_.stat();  // FileIO.__init__ fstat()s to reject directories and learn st_blksize
  file_size_ = st.size;
  buffer_size_ = forced_buffer_size_ ? forced_buffer_size_ : (st.block_size > 1 ? st.block_size : kDefaultBufferSize);
  if (buffer_.size() < buffer_size_) buffer_.resize(buffer_size_);
  file_.is_terminal();  // io.open() asks isatty() to choose line buffering
  raw_ = file_.seek(0, SEEK_CUR);  // BufferedReader.__init__ learns the raw position
  pos_ = raw_;
  reset_buffer();
}

void PyBufferedFile::close() { file_.close(); }

std::size_t PyBufferedFile::raw_read(void* dest, std::size_t n) {
  const std::size_t got = file_.read_some(dest, n);
  raw_ += got;
  return got;
}

std::size_t PyBufferedFile::read(void* dest_void, std::size_t n) {
  auto* dest = static_cast<char*>(dest_void);
  const std::size_t avail = readahead();
  const std::size_t offset_in_buffer = valid_ ? static_cast<std::size_t>(pos_ - buf_start_) : 0;
  if (n <= avail) {  // _bufferedreader_read_fast
    std::memcpy(dest, buffer_.data() + offset_in_buffer, n);
    pos_ += n;
    return n;
  }
  // _bufferedreader_read_generic: drain the buffer, read whole blocks straight into the
  // destination, then refill the buffer for the tail.
  std::size_t written = 0;
  if (avail > 0) {
    std::memcpy(dest, buffer_.data() + offset_in_buffer, avail);
    written = avail;
    pos_ += avail;
  }
  std::size_t remaining = n - written;
  reset_buffer();
  while (remaining > 0) {
    const std::size_t r = minus_last_block(remaining);
    if (r == 0) break;
    const std::size_t got = raw_read(dest + written, r);
    if (got == 0) return written;  // end of file
    written += got;
    remaining -= got;
    pos_ += got;
  }
  buf_start_ = raw_;
  buf_len_ = 0;
  valid_ = true;
  while (remaining > 0 && buf_len_ < buffer_size_) {
    const std::size_t got = raw_read(buffer_.data() + buf_len_, buffer_size_ - buf_len_);
    if (got == 0) break;
    const std::size_t at = buf_len_;
    buf_len_ += got;
    const std::size_t take = remaining < got ? remaining : got;
    std::memcpy(dest + written, buffer_.data() + at, take);
    written += take;
    remaining -= take;
    pos_ += take;
  }
  return written;
}

std::uint64_t PyBufferedFile::readinto_impl(char* dest, std::uint64_t n, char* scratch, std::size_t scratch_size) {
  // `dest` null: the bytes are not kept, and raw reads go to `scratch`, scratch_size at most.
  std::uint64_t done = 0;
  if (const std::size_t avail = readahead(); avail > 0) {
    done = avail < n ? avail : n;
    if (dest) std::memcpy(dest, buffer_.data() + (pos_ - buf_start_), static_cast<std::size_t>(done));
    pos_ += done;
    if (done == n) return n;
  }
  reset_buffer();
  while (done < n) {
    const std::uint64_t remaining = n - done;
    if (remaining > buffer_size_) {  // straight into the destination, all of the rest
      const std::size_t got = dest ? raw_read(dest + done, static_cast<std::size_t>(remaining))
                                   : raw_read(scratch, static_cast<std::size_t>(std::min<std::uint64_t>(remaining, scratch_size)));
      if (got == 0) break;
      done += got;
      pos_ += got;
      continue;
    }
    // Fill the buffer and copy from it.
    buf_start_ = raw_;
    const std::size_t got = raw_read(buffer_.data(), buffer_size_);
    valid_ = true;
    buf_len_ = got;
    if (got == 0) break;
    const std::size_t take = got < remaining ? got : static_cast<std::size_t>(remaining);
    if (dest) std::memcpy(dest + done, buffer_.data(), take);
    done += take;
    pos_ += take;
  }
  return done;
}

std::uint64_t PyBufferedFile::readinto_discard(std::uint64_t n, char* scratch, std::size_t scratch_size) {
  return readinto_impl(nullptr, n, scratch, scratch_size);
}

std::size_t PyBufferedFile::readinto(void* dest, std::size_t n) {
  return static_cast<std::size_t>(readinto_impl(static_cast<char*>(dest), n, nullptr, 0));
}

std::size_t PyBufferedFile::read1(void* dest, std::size_t n) {
  if (n == 0) return 0;
  if (const std::size_t have = readahead(); have > 0) return read(dest, have < n ? have : n);
  reset_buffer();
  const std::size_t got = raw_read(dest, n);
  pos_ += got;
  return got;
}

std::size_t PyBufferedFile::read_all(void* dest_void, std::size_t capacity) {
  auto* dest = static_cast<char*>(dest_void);
  std::size_t written = 0;
  if (const std::size_t avail = readahead(); avail > 0) {
    written = avail < capacity ? avail : capacity;
    std::memcpy(dest, buffer_.data() + (pos_ - buf_start_), written);
    pos_ += written;
    if (written < avail) return written;  // the caller's buffer is full; the rest stays buffered
  }
  reset_buffer();
  // FileIO.readall: lseek(0, SEEK_CUR) and fstat to size the read, then read until EOF.
  const std::uint64_t at = file_.seek(0, SEEK_CUR);
  const std::uint64_t end = file_.stat().size;
  std::size_t want = end >= at ? static_cast<std::size_t>(end - at + 1) : 8192;
  std::size_t got_total = 0;
  while (true) {
    if (written + got_total >= capacity) break;  // a caller sized for the file: never reached
    const std::size_t room = capacity - written - got_total;
    const std::size_t ask = want - got_total;
    const std::size_t got = raw_read(dest + written + got_total, ask < room ? ask : room);
    if (got == 0) break;
    got_total += got;
    if (got_total >= want) want = got_total + 8192;
  }
  pos_ = raw_;
  return written + got_total;
}

std::uint64_t PyBufferedFile::seek(std::int64_t offset, int whence) {
  if (whence != SEEK_END && valid_) {
    const std::size_t avail = readahead();
    if (avail > 0) {
      const std::int64_t rel = whence == SEEK_SET ? offset - static_cast<std::int64_t>(pos_) : offset;
      const std::int64_t back = -static_cast<std::int64_t>(pos_ - buf_start_);
      if (rel >= back && rel <= static_cast<std::int64_t>(avail)) {
        pos_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(pos_) + rel);
        return pos_;
      }
    }
  }
  // Fallback: one lseek, and the buffer is dropped. A relative seek is made relative to the raw
  // position, which is ahead of the logical one by the unread part of the buffer.
  std::int64_t target = offset;
  if (whence == SEEK_CUR) target -= static_cast<std::int64_t>(raw_ - pos_);
  raw_ = file_.seek(target, whence);
  pos_ = raw_;
  reset_buffer();
  return pos_;
}

std::uint64_t PyBufferedFile::tell() {
  file_.seek(0, SEEK_CUR);
  return pos_;
}

void PyBufferedWriter::open(const std::string& path) {
  file_.reopen(path, {.access = storage::Access::write_truncate});
  const auto st = file_.stat();
  buffer_size_ = forced_buffer_size_ ? forced_buffer_size_ : (st.block_size > 1 ? st.block_size : kDefaultBufferSize);
  if (buffer_.size() < buffer_size_) buffer_.resize(buffer_size_);
  file_.is_terminal();
  written_ = file_.seek(0, SEEK_CUR);
  used_ = 0;
}

void PyBufferedWriter::write(const void* data, std::size_t n) {
  const auto* in = static_cast<const char*>(data);
  if (n <= buffer_size_ - used_) {
    std::memcpy(buffer_.data() + used_, in, n);
    used_ += n;
    return;
  }
  flush();
  if (n > buffer_size_) {  // one raw write of all of it
    file_.write_all(in, n);
    written_ += n;
    return;
  }
  std::memcpy(buffer_.data(), in, n);
  used_ = n;
}

void PyBufferedWriter::flush() {
  if (used_ == 0) return;
  file_.write_all(buffer_.data(), used_);
  written_ += used_;
  used_ = 0;
}

void PyBufferedWriter::close() {
  flush();
  file_.close();
}

}  // namespace trainio::format
