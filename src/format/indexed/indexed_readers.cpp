#include "format/indexed/indexed_readers.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "format/indexed/indexed_binary.hpp"
#include "util/error.hpp"

namespace trainio::format {

namespace {
// numpy.empty(N, int64) + readinto is one read of the whole index; past this size the index is
// read in pieces of it (only indexes of millions of samples are larger).
constexpr std::size_t kIndexPiece = 64u << 20;
}  // namespace

namespace {

Error damaged(const std::string& path, const std::string& what) {
  return data_error(fmt::format("'{}' {}", path, what),
                    "the file is damaged or was written for other settings: regenerate the dataset with 'trainio generate'");
}

}  // namespace

void IndexedBinaryReader::load_index(const std::string& path, std::uint64_t samples, std::uint64_t sample_bytes) {
  // What the index holds is checked against the plan: sample i at i * size, every size the
  // sample's (the index files were read anyway; the check costs no storage call).
  for (const bool offsets : {true, false}) {
    const std::string index = offsets ? indexed_binary::offsets_path(path) : indexed_binary::sizes_path(path);
    file_.open(index);
    if (file_.file_size() != 8 * samples)
      throw damaged(index, fmt::format("holds {} bytes, expected {} ({} entries)", file_.file_size(), 8 * samples, samples));
    std::uint64_t left = 8 * samples, entry = 0;
    while (left > 0) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kIndexPiece));
      if (buffer_.size() < n) buffer_.resize(n);
      if (file_.readinto(buffer_.data(), n) != n)
        throw damaged(index, fmt::format("is shorter than {} entries", samples));
      for (std::size_t k = 0; k < n; k += 8, ++entry) {
        std::uint64_t v = 0;
        for (int b = 7; b >= 0; --b) v = (v << 8) | static_cast<unsigned char>(buffer_[k + static_cast<std::size_t>(b)]);
        const std::uint64_t want = offsets ? entry * sample_bytes : sample_bytes;
        if (v != want) throw damaged(index, fmt::format("entry {} is {}, expected {}", entry, v, want));
      }
      left -= n;
    }
    file_.close();
  }
}

std::uint64_t IndexedBinaryReader::read(const SampleRequest& r) {
  const std::string& path = *r.path;
  const plan::SampleShape& shape = r.shape;
  const std::uint64_t samples_in_file = r.samples_in_file;
  const std::uint64_t sample = r.sample;
  const std::uint64_t size = shape.bytes();
  if (!indexed_.contains(r.file)) {
    load_index(path, samples_in_file, size);
    indexed_.insert(r.file);
  }
  if (buffer_.size() < size) buffer_.resize(size);
  if (!keep_open_ || open_path_ != path) {
    if (!open_path_.empty()) file_.close();
    open_path_.clear();
    file_.open(path);
    // Python's open() fstat()s the file: its size is known without another call.
    if (file_.file_size() != samples_in_file * size) {
      file_.close();
      throw damaged(path, fmt::format("is {} bytes, the index says {} samples of {} bytes", file_.file_size(),
                                      samples_in_file, size));
    }
    if (keep_open_) open_path_ = path;
  }
  file_.seek(static_cast<std::int64_t>(sample * size), SEEK_SET);
  if (file_.readinto(buffer_.data(), size) != size)
    throw damaged(path, fmt::format("ends before sample {} ({} bytes at {})", sample, size, sample * size));
  if (!keep_open_) file_.close();
  return size;
}

const MmapIndexedBinaryReader::Maps& MmapIndexedBinaryReader::maps_for(const SampleRequest& r) {
  if (const Maps* kept = maps_.find(r.file)) return *kept;
  const std::string& path = *r.path;
  const std::uint64_t samples = r.samples_in_file, sample_bytes = r.shape.bytes();
  Maps m{storage::MappedFile::open(indexed_binary::offsets_path(path)),
         storage::MappedFile::open(indexed_binary::sizes_path(path)), storage::MappedFile::open(path)};
  // The sizes of the three files are known from mapping them; their content is only read where
  // samples are touched (reading the indexes here would add page faults numpy does not make).
  for (const storage::MappedFile* index : {&m.offsets, &m.sizes})
    if (index->size() != 8 * samples)
      throw damaged(index == &m.offsets ? indexed_binary::offsets_path(path) : indexed_binary::sizes_path(path),
                    fmt::format("holds {} bytes, expected {} ({} entries)", index->size(), 8 * samples, samples));
  if (m.data.size() != samples * sample_bytes)
    throw damaged(path, fmt::format("is {} bytes, the index says {} samples of {} bytes", m.data.size(), samples, sample_bytes));
  return maps_.insert(r.file, std::move(m));
}

std::uint64_t MmapIndexedBinaryReader::read(const SampleRequest& r) {
  const std::uint64_t size = r.shape.bytes();
  const Maps& m = maps_for(r);
  m.data.touch(r.sample * size, size);
  return size;
}

}  // namespace trainio::format
