#pragma once
// What every format provides: a writer that produces the bytes of one data file, and a reader
// that fetches one sample with the storage calls of the framework it stands for.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/workload.hpp"
#include "format/overlap.hpp"
#include "plan/layout.hpp"
#include "storage/file.hpp"
#include "storage/output.hpp"
#include "util/page_aligned.hpp"

namespace trainio::storage {
class SyncQueue;
}

namespace trainio::format {

// Fills buffers with file content (seeded random bytes, or compressible ones): a stream of bytes
// that is a pure function of the file, so that several ranks writing parts of one file write
// the same bytes one rank would.
class ContentSource {
 public:
  virtual ~ContentSource() = default;
  virtual void fill(void* data, std::size_t size) = 0;
  // fill(), and the zip CRC-32 of the bytes folded into `crc` (as zlib's crc32(crc, data, size)).
  // This one reads the bytes back; a source that knows the CRC of what it makes overrides it.
  virtual void fill_crc32(void* data, std::size_t size, std::uint32_t& crc);
  // Continues the stream from byte `offset` of the file's content.
  virtual void seek(std::uint64_t offset) = 0;
};

// A new file that every rank writes byte ranges of, with collective calls.
class SharedOutput {
 public:
  virtual ~SharedOutput() = default;
  // Collective: every rank calls it the same number of times (a rank with nothing left writes 0
  // bytes), each time writing `size` bytes at `offset`.
  virtual void write_at_all(std::uint64_t offset, const void* data, std::uint64_t size) = 0;
  // Collective.
  virtual void close() = 0;
};

// What the engine gives a writer for a file all ranks write together (fewer files than ranks):
// the ranks and the collective means (MPI-IO, parallel HDF5). Format lays out the bytes and the
// calls; the communicator stays in the engine.
class SharedWriting {
 public:
  virtual ~SharedWriting() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // Collective: creates `path` (it must not exist) for collective byte-range writes.
  virtual std::unique_ptr<SharedOutput> create(const std::string& path) = 0;
  // Property lists (HDF5 hid_t) for parallel HDF5 over the job's ranks; the caller closes them.
  virtual std::int64_t hdf5_file_access() = 0;
  virtual std::int64_t hdf5_collective_transfer() = 0;
};

class FileWriter {
 public:
  virtual ~FileWriter() = default;
  // Writes the whole of `file` into `out`, which the caller commits. Companion files (indexes)
  // are complete when this returns, before the data file takes its name.
  virtual void write(const plan::DataFile& file, storage::NewObject& out, ContentSource& content) = 0;
  // Whether write() hands out.local_path() to a library that creates the file itself (libhdf5):
  // `out` is then created without opening it.
  virtual bool writes_by_name() const { return false; }
  // The size the written file will have, when it is known in advance (used to recognise
  // complete files when generation resumes); nullopt when only writing tells (compression).
  virtual std::optional<std::uint64_t> expected_size(const plan::DataFile& file) const = 0;
  // Other files written with a data file (indexes), so that they are removed with it.
  virtual std::vector<std::string> companions(const plan::DataFile&) const { return {}; }
  // Whether `file` reaches storage in one write call, never written again after it: then a file
  // of its expected size under its final name is complete, so generation writes it there
  // directly (as DLIO does), without a temporary name and a rename per file.
  virtual bool writes_in_one_call(const plan::DataFile&) const { return false; }
  // Readies what writing files like `file` needs (write buffers at their size, memory touched,
  // libraries initialised) before generation's clock starts, as a plain writer's buffer is
  // ready before its clock: generation times writing files, not the first file's set-up.
  virtual void prepare(const plan::DataFile&) {}

  // Whether all ranks can write one file together (used when there are fewer files than ranks).
  virtual bool writes_shared() const { return false; }
  // Collective: this rank writes its share of `file`'s samples into `path`, through what `job`
  // provides. Returns the bytes this rank's share put in the file.
  virtual std::uint64_t write_shared(const plan::DataFile& file, const std::string& path, SharedWriting& job,
                                     ContentSource& content);

  // Where writers that stream generated content may generate it beside their writes (the
  // generator's thread); none by default.
  void generate_beside(Overlap* beside) { beside_ = beside; }
  // The queue new files (data files, their indexes) are committed through, to be made durable
  // before they take their names (the generator's); none by default.
  void commit_through(storage::SyncQueue* sync) { sync_ = sync; }
  storage::SyncQueue* sync_queue() const { return sync_; }

 protected:
  Overlap* beside_ = nullptr;
  storage::SyncQueue* sync_ = nullptr;
};

// The samples [first, last) rank `rank` of `ranks` writes of a shared file of `samples`.
struct SampleRange {
  std::uint64_t first = 0, last = 0;
};
SampleRange share_of(std::uint64_t samples, int rank, int ranks);
// The most samples any rank's share holds: how many rounds of collective writes every rank makes.
std::uint64_t largest_share(std::uint64_t samples, int ranks);

// Writers whose bytes trainio lays out itself: they write through storage::Output only, so any
// storage that takes bytes at offsets can hold their files.
class ByteWriter : public FileWriter {
 public:
  void write(const plan::DataFile& file, storage::NewObject& out, ContentSource& content) final {
    write_bytes(file, out, content);
  }
  // The buffer at the size StreamWriter grows it to for such a file (whole, up to its chunk).
  void prepare(const plan::DataFile& file) override;

 protected:
  // Whether the file, of a size known in advance, fits StreamWriter's buffer: a writer that
  // appends all of it to one StreamWriter and flushes once then writes it in one call.
  bool fits_stream_buffer(const plan::DataFile& file) const;
  virtual void write_bytes(const plan::DataFile& file, storage::Output& out, ContentSource& content) = 0;
  util::Bytes buffer_;  // the write buffer (StreamWriter's), reused across files
};

// One sample to read: the file, the shape of its samples, how many it holds, which one.
struct SampleRequest {
  const std::string* path = nullptr;
  plan::SampleShape shape;
  std::uint64_t samples_in_file = 0;
  std::uint64_t sample = 0;
  // The file's dense number in the dataset (plan::DatasetLayout::file_key): what readers that
  // remember files key them by (file_bitmap.hpp, util/file_cache.hpp), instead of its path.
  std::uint64_t file = 0;
};

// One reader per thread: it owns that thread's buffers, allocated once.
class SampleReader {
 public:
  virtual ~SampleReader() = default;
  // Reads the requested sample. Returns the sample's bytes (what the training step consumes),
  // whatever the reader had to read or decode to get them.
  virtual std::uint64_t read(const SampleRequest& r) = 0;
  // Reads a batch; readers that overlap reads (io_uring) override it. Returns the sample bytes.
  virtual std::uint64_t read_batch(std::span<const SampleRequest> batch) {
    std::uint64_t bytes = 0;
    for (const auto& r : batch) bytes += read(r);
    return bytes;
  }
  // Serves the sample with no storage call when the reader already holds what it needs (the row
  // group holding it, read earlier this epoch): sets `bytes` as read() would and returns true.
  // Otherwise does nothing and returns false. The loader then takes no clock reading for the
  // sample (docs/metrics.md, sample_read_seconds).
  virtual bool read_from_memory(const SampleRequest& r, std::uint64_t& bytes) {
    (void)r;
    (void)bytes;
    return false;
  }
  // read_from_memory() for a run of `count` samples of r's file: r.sample, r.sample + stride, ...
  // Serves the longest prefix of the run it can with no storage call, sets `bytes` to their
  // bytes and returns how many it served (0 when the first needs read()). The loader asks once
  // per run instead of once per sample: readers that know the range they hold override it.
  virtual std::uint64_t read_run_from_memory(const SampleRequest& r, std::uint64_t stride, std::uint64_t count,
                                             std::uint64_t& bytes);
  // Whether read_batch() overlaps the batch's reads (the loader then hands it whole batches).
  virtual bool reads_batches() const { return false; }
  // A new epoch (or evaluation phase) starts: readers that keep things per epoch, as the DLIO
  // fork's Parquet reader keeps footers, drop them. Called while no read is under way.
  virtual void begin_epoch() {}
};

// How a loader asks for samples, which decides when the framework's reader opens and closes files:
//  - by_index: one sample at a time (DLIO's read_index, used by PyTorch's and DALI's loaders):
//    open, read, close per sample (read_type: memory keeps files open);
//  - by_file_session: DLIO's generator for TensorFlow (FormatReader.next()): a file stays open while
//    the thread reads samples_per_file samples (see session_reader.hpp).
enum class ReaderUse { by_index, by_file_session };

// Throws a config error when the workload's format is not built (yet).
std::unique_ptr<FileWriter> make_writer(const config::Workload& w);
std::unique_ptr<SampleReader> make_reader(const config::Workload& w, ReaderUse use = ReaderUse::by_index);

// Checks, before any I/O, what the workload asks of its format (e.g. an HDF5 chunk shape that
// fits the datasets); throws a config error.
void check_workload(const config::Workload& w, const plan::DatasetLayout& layout);

// Checks that the file at file.path is a complete, well-formed file of the workload's format
// holding what `file` describes (samples, shapes; checksums where the format has them).
// Returns what is wrong, or nullopt when the file is good.
std::optional<std::string> validate_file(const config::Workload& w, const plan::DataFile& file);

}  // namespace trainio::format
