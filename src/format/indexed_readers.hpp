#pragma once
// Readers of indexed_binary datasets, as DLIO's do it.
//  - IndexedBinaryReader: the index files of a data file are loaded once (Python open + readinto
//    of the whole index), then each sample is open, seek(offset), readinto(size), close.
//  - MmapIndexedBinaryReader: the index and data files are memory-mapped once (numpy.memmap);
//    each sample's pages are then touched, so the bytes are really read (DLIO takes a view and
//    never touches them, so its runs read nothing: a DLIO bug).

#include <list>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "format/format.hpp"
#include "format/python_io.hpp"
#include "storage/mapped_file.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

class IndexedBinaryReader final : public SampleReader {
 public:
  // `keep_open` (read_type: memory): the file object stays open, later samples are seek + read.
  explicit IndexedBinaryReader(bool keep_open = false) : keep_open_(keep_open) {}
  std::uint64_t read(const std::string& path, const plan::SampleShape& shape, std::uint64_t samples_in_file,
                     std::uint64_t sample) override;

 private:
  void load_index(const std::string& path, std::uint64_t samples, std::uint64_t sample_bytes);
  bool keep_open_;
  std::string open_path_;  // the file file_ holds open (keep_open)
  PyBufferedFile file_;
  std::unordered_set<std::string> indexed_;  // files whose index this reader has loaded
  util::Bytes buffer_;
};

class MmapIndexedBinaryReader final : public SampleReader {
 public:
  std::uint64_t read(const std::string& path, const plan::SampleShape& shape, std::uint64_t samples_in_file,
                     std::uint64_t sample) override;

 private:
  struct Maps {
    storage::MappedFile offsets, sizes, data;
  };
  const Maps& maps_for(const std::string& path, std::uint64_t samples, std::uint64_t sample_bytes);
  // A bounded set of open maps (each holds descriptors): least recently opened goes first.
  static constexpr std::size_t kMaxMapped = 256;
  std::unordered_map<std::string, Maps> maps_;
  std::list<std::string> order_;
};

}  // namespace trainio::format
