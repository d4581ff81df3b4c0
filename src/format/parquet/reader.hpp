#pragma once
// Reads samples of a Parquet dataset as the MLCommons DLIO fork's readers do (see docs/formats.md):
//  - a file's footer is read once per epoch by each reader thread (pyarrow's ParquetFile: the last
//    64 KiB, then the rest of a longer footer);
//  - a sample reads the row group that holds it, once per epoch and thread (later samples of the
//    same row group cost no storage call), and only the projected columns' chunks:
//      span:   one read from the first projected chunk to the end of the last, through a file
//              opened for that read (the fork's reader for local_fs: open, seek, read, close);
//      chunks: one read per projected chunk on the file pyarrow keeps open (the fork's
//              read_row_group reader), coalesced as pyarrow's pre_buffer does when it is on.
// On S3 (the fork's ParquetReaderS3Iterable) the same reads are requests: a HEAD for the object's
// size, ranged GETs of the footer, then one ranged GET per row group of the projected span (or,
// with pre_buffer, of each coalesced range).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/workload.hpp"
#include "format/file_bitmap.hpp"
#include "format/format.hpp"
#include "format/parquet/footer.hpp"
#include "format/parquet/ranges.hpp"
#include "format/python_io.hpp"
#include "util/file_cache.hpp"
#include "util/page_aligned.hpp"

namespace trainio::storage::s3 {
class Client;
}

namespace trainio::format::parquet {

enum class ReadPattern { span, chunks };

class Reader final : public SampleReader {
 public:
  explicit Reader(const config::Workload& w);
  ~Reader() override;
  std::uint64_t read(const SampleRequest& r) override;
  bool read_from_memory(const SampleRequest& r, std::uint64_t& bytes) override;
  std::uint64_t read_run_from_memory(const SampleRequest& r, std::uint64_t stride, std::uint64_t count,
                                     std::uint64_t& bytes) override;
  void begin_epoch() override;

 private:
  // What a file's index was derived from: its footer's bytes (by length and CRC-32C) and size,
  // and the sample shape and count it was checked against.
  struct FooterKey {
    std::uint64_t file_size = 0, length = 0;
    std::uint32_t crc = 0;
    std::uint64_t sample_bytes = 0, samples = 0;
    bool operator==(const FooterKey&) const = default;
  };
  struct FileIndex {
    FooterKey footer;
    storage::File file;                     // chunks: kept open, as pyarrow keeps its ParquetFile's
    std::vector<std::uint64_t> row_starts;  // first row of each row group, and the row count last
    std::vector<Range> ranges;              // each row group's reads, in order
    std::vector<std::uint32_t> first_range; // row group g reads ranges[first_range[g] .. first_range[g+1])
    std::vector<bool> read;                 // row groups read this epoch
    std::string bucket, key;                // on S3: the object
  };
  FileIndex& index_for(const SampleRequest& r);
  void read_row_group(FileIndex& f, const std::string& path, std::size_t group);

  // Reads `length` bytes at `offset` of the indexed object, counted, not kept.
  void get_object_range(const FileIndex& f, const std::string& path, std::size_t group, std::uint64_t offset, std::uint64_t length);

  config::Workload workload_;
  std::unique_ptr<storage::s3::Client> s3_;  // storage_type: s3
  ReadPattern pattern_;
  bool pre_buffer_;
  // Parsed footers of the files read last: a file read again in the same epoch after it left
  // costs a footer read the fork (which keeps every footer of the epoch) does not make. With
  // chunk reads each holds an open descriptor: 64 per thread stays far below common fd limits.
  static constexpr std::size_t kMaxFiles = 64;
  util::FileCache<FileIndex> files_{kMaxFiles};
  FileBitmap indexed_;  // files whose footer this thread read this epoch
  PyBufferedFile span_file_;
  std::string scratch_;
  util::Bytes buffer_;
  std::vector<Range> chunk_ranges_;
  std::uint64_t projected_for_ = ~0ULL, projected_bytes_ = 0;  // a row's projected value bytes, by sample size
  // The rows [first, end) of the row group the last sample came from, read this epoch: the next
  // samples mostly come from it, and are then served without looking the file up.
  struct HeldRows {
    std::uint64_t file = ~0ULL, first = 0, end = 0;
  } held_;
};

}  // namespace trainio::format::parquet
