#pragma once
// HDF5 as DLIO writes it with h5py (libver 'latest'): datasets records_0..k-1 of shape
// (samples, sample dims...) — with k = hdf5.num_dset_per_record, each holding 1/k of the first
// dimension — optionally chunked (hdf5.chunk_dims), gzip-compressed, resizable (hdf5.max_shape),
// plus 'labels' (int64 zeros, one per sample). Written and read through libhdf5 itself.

#include <hdf5.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/file_cache.hpp"
#include "format/format.hpp"
#include "format/hdf5/hdf5_api.hpp"
#include "format/hdf5/hdf5_replay.hpp"
#include "format/hdf5/hdf5_write_template.hpp"
#include "format/per_file_shape.hpp"
#include "storage/file.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

// The name of dataset i of a file, as DLIO names them: "records_0", "records_1", ...
std::string dataset_name(int i);

struct Hdf5Layout {
  std::vector<std::uint64_t> shape;      // of each records_i dataset
  std::vector<std::uint64_t> max_shape;  // empty: fixed size
  std::vector<std::uint64_t> chunk;      // empty: contiguous
  int datasets = 1;
  int gzip_level = -1;                   // -1: no compression
  config::ElementType dtype = config::ElementType::uint8;
  std::uint64_t sample_bytes_per_dataset() const;
  bool operator==(const Hdf5Layout&) const = default;
};

// The workload's keys that shape HDF5 files, taken once: readers and writers keep these, not the
// whole workload.
struct Hdf5Settings {
  explicit Hdf5Settings(const config::Workload& w);
  std::int64_t datasets_per_record = 1;     // dataset.hdf5.num_dset_per_record
  std::vector<std::uint64_t> chunk_dims;    // dataset.hdf5.chunk_dims
  std::vector<std::uint64_t> max_shape;     // dataset.hdf5.max_shape
  config::Compression compression = config::Compression::none;
  std::int64_t compression_level = 4;
};

// The layout of one file (throws a config error for combinations libhdf5 would refuse).
Hdf5Layout hdf5_layout(const Hdf5Settings& settings, const plan::DataFile& file);
inline Hdf5Layout hdf5_layout(const config::Workload& w, const plan::DataFile& file) {
  return hdf5_layout(Hdf5Settings(w), file);
}

// Writes files through libhdf5, as h5py does. Files of contiguous datasets without filters are
// written by libhdf5 once per layout and second, and the next files of that layout within the
// same second by replaying its storage calls (hdf5_write_template.hpp): byte for byte the file
// libhdf5 would write, without its CPU cost per file.
class Hdf5Writer final : public FileWriter {
 public:
  explicit Hdf5Writer(const Hdf5Settings& settings) : settings_(settings) {}
  void write(const plan::DataFile& file, storage::NewObject& out, ContentSource& content) override;
  bool writes_by_name() const override { return true; }  // libhdf5 creates the file
  // libhdf5 initialised, the access list made, the buffer sized for a slab of `file`.
  void prepare(const plan::DataFile& file) override;
  std::optional<std::uint64_t> expected_size(const plan::DataFile&) const override { return std::nullopt; }
  // Parallel HDF5: all ranks create the file together and write their samples collectively.
  bool writes_shared() const override { return true; }
  std::uint64_t write_shared(const plan::DataFile& file, const std::string& path, SharedWriting& job,
                             ContentSource& content) override;
  // Files written by replaying libhdf5's calls rather than through libhdf5.
  std::uint64_t files_replayed() const { return replayed_; }

 private:
  // Writes samples `mine` of `f` as writer `writer` of `writers` (0 of 1 alone): every writer
  // makes the same calls, as collective HDF5 I/O requires. With `raw`, where the datasets'
  // bytes lie in the file (contiguous datasets only).
  void write_file(const plan::DataFile& f, const std::string& path, hid_t fapl, hid_t dxpl, SampleRange mine,
                  int writer, int writers, ContentSource& content, std::vector<Hdf5RawExtent>* raw = nullptr);
  // Writes `f` through libhdf5, recording a template of its calls when the layout allows one.
  void write_through_hdf5(const plan::DataFile& f, const Hdf5Layout& l, const std::string& path, ContentSource& content);
  const Hdf5Settings settings_;
  util::Bytes buffer_;
  h5::Id fapl_;  // the trainio driver's file access list, made once (a list per file cost 4%)
  // The template of the last file written through libhdf5: its layout, and the second its
  // object header times hold.
  std::optional<Hdf5WriteTemplate> template_;
  Hdf5Layout template_layout_;
  std::int64_t template_second_ = -1;
  std::vector<unsigned char> scratch_;
  std::uint64_t replayed_ = 0;
};

// DLIO's HDF5Reader through h5py: h5py.File(path, 'r'), then f['records_i'][sample] for every
// dataset of the record, then close. libhdf5 itself makes the calls, through the trainio driver.
// libhdf5 runs under the process-wide HDF5 lock with the driver recording its calls, which are
// then replayed without the lock (hdf5_replay.hpp), so reader threads read in parallel as DLIO's
// worker processes do: contiguous datasets once per file layout, for every sample and file;
// chunked datasets without filters once per sample index and layout (files opened per sample).
// Compressed datasets, and chunked ones with read_type: memory, are read through libhdf5 under
// the lock: one HDF5 read at a time per process.
class Hdf5Reader final : public SampleReader {
 public:
  // With `keep_open` (read_type: memory) the h5py.File objects stay open (DLIO keeps them in
  // open_file_map): the superblock and root reads happen once per file, samples then cost
  // dataset reads.
  // `read_threads`: the threads that will read through readers like this one.
  Hdf5Reader(const Hdf5Settings& settings, bool keep_open, std::int64_t read_threads);
  ~Hdf5Reader() override;
  std::uint64_t read(const SampleRequest& r) override;
  // Per reader thread, so that memory stays bounded when every file has a shape of its own
  // (record_length_bytes_stdev): file shapes with a template, and sample slots over all
  // templates of chunked files (24 bytes each). Files past them are read through libhdf5.
  static constexpr std::size_t kMaxTemplates = 1024;
  static constexpr std::uint64_t kMaxIndexedSlots = std::uint64_t{1} << 18;
  // File shapes this reader holds recordings for (at most kMaxTemplates), and the sample slots of
  // chunked files' templates (at most kMaxIndexedSlots): what its memory grows with.
  std::size_t templates_held() const { return templates_.size(); }
  std::uint64_t indexed_slots() const { return indexed_slots_; }

 private:
  enum class Replay { contiguous, per_sample, none };
  struct Template {  // per file shape: the recorded calls (one per file layout met)
    std::uint64_t samples = 0, sample_bytes = 0;
    std::vector<Hdf5Replay> replays;                  // contiguous: for any sample
    std::vector<std::vector<Hdf5Replay>> per_sample;  // chunked: by sample index
    bool replayable = true;  // false once libhdf5's calls did not fit the model
  };
  static constexpr std::size_t kMaxLayouts = 8;          // recordings kept per file shape (and sample)
  static constexpr std::size_t kMaxRecordings = 4096;    // per reader thread: memory stays bounded
  static constexpr std::uint64_t kMaxIndexedSamples = 65536;  // chunked files replayed by sample index
  struct Kept {  // a file kept open by the replay, and the layout it matched
    storage::File file;
    std::size_t layout = 0;
  };
  // The template of a file shape; nullptr when a new one would pass kMaxTemplates.
  Template* template_for(const plan::SampleShape& shape, std::uint64_t samples_in_file);
  const Hdf5Layout& layout_of(const plan::SampleShape& shape, std::uint64_t samples_in_file);
  // Reads through libhdf5 under the lock, recording the calls into `t` when it is replayable.
  void read_through_hdf5(const SampleRequest& r, const Hdf5Layout& l, Template* t);

  const Hdf5Settings settings_;
  bool keep_open_;
  Replay replay_;
  // keep_open: DLIO keeps every file open; trainio keeps the kMaxOpen used last (descriptors).
  static constexpr std::size_t kMaxOpen = 256;
  util::FileCache<h5::Id> open_{kMaxOpen};  // through libhdf5 (closed under the HDF5 lock)
  h5::Id fapl_;                             // the trainio driver's access list, made once (under the lock)
  util::FileCache<Kept> files_{kMaxOpen};   // replayed
  std::map<std::pair<std::uint64_t, std::uint64_t>, Template> templates_;  // by (samples, sample bytes)
  std::size_t recordings_ = 0;
  std::uint64_t indexed_slots_ = 0;  // per_sample slots over all templates
  std::vector<unsigned char> scratch_;  // metadata read while replaying
  storage::File replay_file_;           // files replayed for one sample, reopened per sample
  PerFileShape<Hdf5Layout> layout_;     // of the last file shape read through libhdf5
  util::Bytes buffer_;
};

// Reads sample `sample` of every records_i dataset of an open file through libhdf5, as h5py's
// f['records_i'][sample] does, into `buffer` (sample_bytes_per_dataset() bytes). The caller
// holds storage::hdf5_lock().
void hdf5_read_sample(hid_t file, const std::string& path, const Hdf5Layout& l, std::uint64_t sample, void* buffer);

std::optional<std::string> validate_hdf5(const Hdf5Settings& settings, const plan::DataFile& expected);

}  // namespace trainio::format
