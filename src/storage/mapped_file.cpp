#include "storage/mapped_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "storage/file.hpp"
#include "storage/io_observer.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace trainio::storage {


MappedFile MappedFile::open(const std::string& path) {
  MappedFile m;
  m.path_ = path;
  File f = File::open(path);
  f.stat();
  f.is_terminal();
  f.seek(0, SEEK_CUR);
  m.size_ = f.seek(0, SEEK_END);  // numpy.memmap: fid.seek(0, 2); flen = fid.tell()
  f.seek(0, SEEK_CUR);
  f.stat();  // mmap.mmap checks the size with fstat
  m.kept_ = f.duplicate();
  if (m.size_ > 0) {
    const auto start = util::now_ns();
    void* p = ::mmap(nullptr, m.size_, PROT_READ, MAP_SHARED, m.kept_.fd(), 0);
    if (p == MAP_FAILED)
      throw io_error(fmt::format("mmap('{}', {} bytes) failed: {}", path, m.size_, std::strerror(errno)),
                     "the file system may not support memory maps: use dataset.format=indexed_binary");
    observe_path_op(Op::mmap, path, start);
    m.data_ = static_cast<const unsigned char*>(p);
  }
  f.close();
  return m;
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& o) noexcept
    : path_(std::move(o.path_)), data_(o.data_), size_(o.size_), kept_(std::move(o.kept_)) {
  o.data_ = nullptr;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    data_ = o.data_;
    size_ = o.size_;
    kept_ = std::move(o.kept_);
    o.data_ = nullptr;
  }
  return *this;
}

void MappedFile::release() noexcept {
  if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
  data_ = nullptr;
  kept_ = File();
}

std::uint64_t MappedFile::touch(std::uint64_t offset, std::uint64_t length) const {
  if (offset + length > size_)
    throw data_error(fmt::format("'{}' is {} bytes, but a sample at {} needs {}", path_, size_, offset, length),
                     "the file is truncated: regenerate the dataset with 'trainio generate'");
  const ProbeTicket probe = kept_.probe_before(offset, length);  // before the faults fetch the pages
  const auto start = util::now_ns();
  static const long page = ::sysconf(_SC_PAGESIZE);
  std::uint64_t sum = 0;
  const std::uint64_t first = offset - offset % static_cast<std::uint64_t>(page);
  for (std::uint64_t at = std::max(first, offset); at < offset + length; at = (at / page + 1) * page)
    sum += *reinterpret_cast<const volatile unsigned char*>(data_ + at);
  kept_.report_transfer(Op::touch, length, offset, start, probe);
  return sum;
}

}  // namespace trainio::storage
