#pragma once
// HDF5 as DLIO writes it with h5py (libver 'latest'): datasets records_0..k-1 of shape
// (samples, sample dims...) — with k = hdf5.num_dset_per_record, each holding 1/k of the first
// dimension — optionally chunked (hdf5.chunk_dims), gzip-compressed, resizable (hdf5.max_shape),
// plus 'labels' (int64 zeros, one per sample). Written and read through libhdf5 itself.

#include <hdf5.h>

#include <map>
#include <string>
#include <vector>

#include "format/format.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

struct Hdf5Layout {
  std::vector<std::uint64_t> shape;      // of each records_i dataset
  std::vector<std::uint64_t> max_shape;  // empty: fixed size
  std::vector<std::uint64_t> chunk;      // empty: contiguous
  int datasets = 1;
  int gzip_level = -1;                   // -1: no compression
  config::ElementType dtype = config::ElementType::uint8;
  std::uint64_t sample_bytes_per_dataset() const;
};

// The layout of one file (throws a config error for combinations libhdf5 would refuse).
Hdf5Layout hdf5_layout(const config::Workload& w, const plan::DataFile& file);

class Hdf5Writer final : public FileWriter {
 public:
  explicit Hdf5Writer(const config::Workload& w) : workload_(w) {}
  void write(const plan::DataFile& file, const std::string& path, ContentSource& content) override;
  std::optional<std::uint64_t> expected_size(const plan::DataFile&) const override { return std::nullopt; }
  // Parallel HDF5: all ranks create the file together and write their samples collectively.
  bool writes_shared() const override { return true; }
  void write_shared(const plan::DataFile& file, const std::string& path, const mpi::Comm& comm,
                    ContentSource& content) override;

 private:
  void write_file(const plan::DataFile& f, const std::string& path, hid_t fapl, hid_t dxpl, SampleRange mine,
                  const mpi::Comm* comm, ContentSource& content);
  const config::Workload& workload_;
  util::Bytes buffer_;
};

// DLIO's HDF5Reader through h5py: h5py.File(path, 'r'), then f['records_i'][sample] for every
// dataset of the record, then close. libhdf5 itself makes the calls, through the trainio driver.
class Hdf5Reader final : public SampleReader {
 public:
  // With `keep_open` (read_type: memory) the h5py.File objects stay open (DLIO keeps them in
  // open_file_map): the superblock and root reads happen once per file, samples then cost
  // dataset reads.
  Hdf5Reader(const config::Workload& w, bool keep_open) : workload_(w), keep_open_(keep_open) {}
  ~Hdf5Reader() override;
  std::uint64_t read(const std::string& path, const plan::SampleShape& shape, std::uint64_t samples_in_file,
                     std::uint64_t sample) override;

 private:
  const config::Workload& workload_;
  bool keep_open_;
  std::map<std::string, hid_t> open_;  // keep_open: path -> file id (at most kMaxOpen)
  static constexpr std::size_t kMaxOpen = 256;
  util::Bytes buffer_;
};

std::optional<std::string> validate_hdf5(const config::Workload& w, const plan::DataFile& expected);

}  // namespace trainio::format
