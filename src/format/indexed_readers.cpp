#include "format/indexed_readers.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "format/indexed_binary.hpp"
#include "util/error.hpp"

namespace trainio::format {

namespace {
// numpy.empty(N, int64) + readinto is one read of the whole index; past this size the index is
// read in pieces of it (only indexes of millions of samples are larger).
constexpr std::size_t kIndexPiece = 64u << 20;
}  // namespace

void IndexedBinaryReader::load_index(const std::string& path, std::uint64_t samples) {
  for (const std::string& index : {indexed_binary::offsets_path(path), indexed_binary::sizes_path(path)}) {
    file_.open(index);
    std::uint64_t left = 8 * samples;
    while (left > 0) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kIndexPiece));
      if (buffer_.size() < n) buffer_.resize(n);
      if (file_.readinto(buffer_.data(), n) != n)
        throw data_error(fmt::format("index '{}' is shorter than {} entries", index, samples),
                         "regenerate the dataset with 'trainio generate'");
      left -= n;
    }
    file_.close();
  }
  indexed_.insert(path);
}

std::uint64_t IndexedBinaryReader::read(const std::string& path, const plan::SampleShape& shape,
                                        std::uint64_t samples_in_file, std::uint64_t sample) {
  if (!indexed_.count(path)) load_index(path, samples_in_file);
  const std::uint64_t size = shape.bytes();
  if (buffer_.size() < size) buffer_.resize(size);
  if (!keep_open_ || open_path_ != path) {
    if (!open_path_.empty()) file_.close();
    file_.open(path);
    open_path_ = keep_open_ ? path : std::string();
  }
  file_.seek(static_cast<std::int64_t>(sample * size), SEEK_SET);
  if (file_.readinto(buffer_.data(), size) != size)
    throw data_error(fmt::format("'{}' ends before sample {} ({} bytes at {})", path, sample, size, sample * size),
                     "the file is truncated: regenerate the dataset with 'trainio generate'");
  if (!keep_open_) file_.close();
  return size;
}

const MmapIndexedBinaryReader::Maps& MmapIndexedBinaryReader::maps_for(const std::string& path) {
  if (const auto it = maps_.find(path); it != maps_.end()) return it->second;
  if (maps_.size() >= kMaxMapped) {
    maps_.erase(order_.front());
    order_.pop_front();
  }
  Maps m{storage::MappedFile::open(indexed_binary::offsets_path(path)),
         storage::MappedFile::open(indexed_binary::sizes_path(path)), storage::MappedFile::open(path)};
  order_.push_back(path);
  return maps_.emplace(path, std::move(m)).first->second;
}

std::uint64_t MmapIndexedBinaryReader::read(const std::string& path, const plan::SampleShape& shape,
                                            std::uint64_t, std::uint64_t sample) {
  const Maps& m = maps_for(path);
  const std::uint64_t size = shape.bytes();
  m.data.touch(sample * size, size);
  return size;
}

}  // namespace trainio::format
