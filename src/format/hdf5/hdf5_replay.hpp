#pragma once
// libhdf5's storage calls for a sample of a contiguous HDF5 file, replayed without libhdf5 so
// reader threads need no lock (Debian's libhdf5 is not thread-safe: every H5* call takes
// storage::hdf5_lock()).
//
// libhdf5 is run once, under the lock, with the trainio driver recording what it does (open and
// fstat, flock, the metadata reads with their bytes, the raw-data reads, close). Replaying that
// sequence for another sample or another file is exact because libhdf5's calls follow only from
// the bytes it reads, the file's size and the request:
//  - the metadata reads are issued at the recorded offsets and sizes, and their bytes compared
//    with the recorded ones; while they agree (and the file has the recorded size) libhdf5 would
//    have made the same decisions. Object header times, and the checksums that cover them, are
//    left out of the comparison: they differ between files written at different times and never
//    steer libhdf5 (it verifies checksums; the replay does not, `trainio validate` does). At
//    the first difference the replay stops (mismatch) and the caller reads the sample through
//    libhdf5 instead;
//  - the raw-data read of dataset i for sample k is the contiguous dataset's: at base_i + k·S,
//    of S bytes when S exceeds the sieve buffer V (64 KiB), else one sieve fill of
//    min(V, (N − k)·S, file end − offset) bytes (H5D__contig_readvv_sieve_cb);
//  - H5Fopen names the file outside the driver after the superblock reads (getcwd for a relative
//    path, then lstat: storage::name_file_as_hdf5).
// Chunked datasets without filters are replayed sample by sample (Model::this_sample): their
// reads depend on the chunk index and the chunk cache, so a recording of sample k serves
// sample k of files whose metadata agree. Compressed chunks need libhdf5's filters to become
// samples: the reader keeps them under the lock.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "format/hdf5/hdf5_calls.hpp"
#include "storage/file.hpp"
#include "storage/hdf5_vfd.hpp"

namespace trainio::format {

// What fixes the raw-data reads of a contiguous file's sample.
struct Hdf5ReplayShape {
  std::uint64_t samples = 0;       // N: samples in the file (first dimension of each dataset)
  std::uint64_t sample_bytes = 0;  // S: bytes of one sample in one dataset
  int datasets = 1;                // records_0 .. records_{datasets-1}, read in this order
  std::uint64_t sieve_bytes = 64 * 1024;  // V: libhdf5's default sieve buffer (H5Pset_sieve_buf_size)
};

class Hdf5Replay {
 public:
  using Step = Hdf5Step;  // open, lock, unlock, path_stat, metadata, data, close
  struct Read {
    std::uint64_t offset = 0, size = 0;
    bool operator==(const Read&) const = default;
  };

  // The template of a recording of sample `sample`; nullopt when the recording is not a
  // contiguous read that this model predicts (its data reads are checked against the model).
  // How the raw-data reads of other samples follow from the recorded ones:
  //  - contiguous: the contiguous dataset's reads above (any sample);
  //  - this_sample: as recorded (the template replays the recorded sample only, in files whose
  //    metadata agree: chunked datasets, whose reads depend on the chunk index and cache).
  enum class Model { contiguous, this_sample };
  // A recording without raw-data reads (shape.datasets == 0) is a template of opening the file.
  static std::optional<Hdf5Replay> learn(const storage::DriverRecording& r, const Hdf5ReplayShape& shape,
                                         std::uint64_t sample, Model model = Model::contiguous);

  // The raw-data read of `dataset` for `sample`, as libhdf5 issues it.
  Read data_read(int dataset, std::uint64_t sample) const;
  const std::vector<Step>& steps() const { return steps_; }
  std::span<const unsigned char> metadata(const Step& s) const { return {metadata_.data() + s.source, s.size}; }
  std::uint64_t file_size() const { return file_size_; }
  // The largest raw-data read: the size run()'s `data` needs.
  std::uint64_t data_bytes() const { return data_bytes_; }
  const Hdf5ReplayShape& shape() const { return shape_; }

  // How much of the sequence run() issues: a file opened for this sample only (on_demand), opened
  // and kept (read_type: memory, first sample of the file), or already open (later samples:
  // libhdf5's caches hold the metadata, so only the data reads remain).
  enum class Part { open_read_close, open_read, read };
  // Issues the calls of whichever of `candidates` (templates of one file shape, recorded from
  // files whose metadata differ) the file's bytes agree with, through storage::File and without
  // the HDF5 lock; returns that candidate's index. While their metadata bytes agree, candidates
  // call alike (libhdf5 decides from those bytes), so each step is issued once and the candidates
  // whose bytes differ drop out. `file` is opened here unless Part::read, and left open with
  // Part::open_read. `scratch` receives metadata, `data` the samples (at least max(S, V) bytes).
  // nullopt when none agrees: the calls made so far were libhdf5's too, and `file` is open.
  static std::optional<std::size_t> run(std::span<const Hdf5Replay> candidates, storage::File& file,
                                        const std::string& path, std::uint64_t sample, Part part,
                                        std::vector<unsigned char>& scratch, void* data);

 private:
  Read data_read_at(std::uint64_t base, std::uint64_t sample) const;
  // Whether the bytes `got` of metadata step `s` agree with the recorded ones, but for volatile_.
  bool agrees(const Step& s, const unsigned char* got) const;
  Hdf5ReplayShape shape_;
  bool exact_ = false;
  std::uint64_t data_bytes_ = 0;
  std::vector<Step> steps_;
  std::vector<unsigned char> metadata_;
  std::vector<Read> volatile_;  // object header times and checksums: may differ (sorted by offset)
  std::uint64_t file_size_ = 0;
};

}  // namespace trainio::format
