#pragma once
// Readers of indexed_binary datasets, as DLIO's do it.
//  - IndexedBinaryReader: the index files of a data file are loaded once (Python open + readinto
//    of the whole index), then each sample is open, seek(offset), readinto(size), close.
//  - MmapIndexedBinaryReader: the index and data files are memory-mapped once (numpy.memmap);
//    each sample's pages are then touched, so the bytes are really read (DLIO takes a view and
//    never touches them, so its runs read nothing: a DLIO bug).

#include <string>
#include <vector>

#include "format/file_bitmap.hpp"
#include "util/file_cache.hpp"
#include "format/format.hpp"
#include "format/python_io.hpp"
#include "storage/mapped_file.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

class IndexedBinaryReader final : public SampleReader {
 public:
  // `keep_open` (read_type: memory): the file object stays open, later samples are seek + read.
  explicit IndexedBinaryReader(bool keep_open = false) : keep_open_(keep_open) {}
  std::uint64_t read(const SampleRequest& r) override;

 private:
  void load_index(const std::string& path, std::uint64_t samples, std::uint64_t sample_bytes);
  bool keep_open_;
  std::string open_path_;  // the file file_ holds open (keep_open)
  PyBufferedFile file_;
  FileBitmap indexed_;  // files whose index this reader has loaded (DLIO keeps every index it loaded)
  util::Bytes buffer_;
};

class MmapIndexedBinaryReader final : public SampleReader {
 public:
  std::uint64_t read(const SampleRequest& r) override;

 private:
  struct Maps {
    storage::MappedFile offsets, sizes, data;
  };
  const Maps& maps_for(const SampleRequest& r);
  // Open maps hold descriptors: the kMaxMapped used last are kept.
  static constexpr std::size_t kMaxMapped = 256;
  util::FileCache<Maps> maps_{kMaxMapped};
};

}  // namespace trainio::format
