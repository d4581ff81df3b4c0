#include "format/extents.hpp"

#include <fmt/format.h>

#include <mutex>
#include <vector>

#include "util/file_cache.hpp"
#include "format/hdf5/hdf5_api.hpp"
#include "format/hdf5/hdf5_replay.hpp"
#include "format/numpy/npy_file.hpp"
#include "format/per_file_shape.hpp"
#include "format/archive/tar.hpp"
#include "format/tfrecord/tfrecord.hpp"
#include "format/archive/zip.hpp"
#include "storage/hdf5_vfd.hpp"
#include "util/error.hpp"

namespace trainio::format {

namespace {

using config::Format;

class WholeFile final : public ExtentFinder {
 public:
  bool needs_file_size() const override { return true; }
  Extent find(const SampleRequest&, std::uint64_t size) override {
    return {0, size};
  }
};

// Samples back to back after a header of `header(shape, samples)` bytes.
class Contiguous final : public ExtentFinder {
 public:
  using Header = std::uint64_t (*)(const plan::SampleShape&, std::uint64_t);
  explicit Contiguous(Header header) : header_(header) {}
  Extent find(const SampleRequest& r, std::uint64_t) override {
    const std::uint64_t bytes = r.shape.bytes();
    // The header is worked out by formatting it: once per file shape, not per sample.
    const std::uint64_t header = header_bytes_.get(r.shape, r.samples_in_file, [&] { return header_(r.shape, r.samples_in_file); });
    return {header + r.sample * bytes, bytes};
  }

 private:
  Header header_;
  PerFileShape<std::uint64_t> header_bytes_;
};

plan::DataFile as_file(const plan::SampleShape& shape, std::uint64_t samples) {
  plan::DataFile f;
  f.sample = shape;
  f.num_samples = samples;
  return f;
}

std::uint64_t npy_header(const plan::SampleShape& shape, std::uint64_t samples) {
  return data_file_header(as_file(shape, samples)).size();
}

std::uint64_t npz_header(const plan::SampleShape& shape, std::uint64_t samples) {
  zip::Member x;
  x.name = "x.npy";
  x.size = x.compressed_size = npy_header(shape, samples) + shape.bytes() * samples;
  return zip::local_header_size(x) + npy_header(shape, samples);
}

std::uint64_t no_header(const plan::SampleShape&, std::uint64_t) { return 0; }

class TfRecordExtents final : public ExtentFinder {
 public:
  Extent find(const SampleRequest& r, std::uint64_t) override {
    const std::uint64_t record = frame_.of(r.shape).record_bytes();
    return {r.sample * record, record};
  }

 private:
  tfrecord::FrameOfShape frame_;  // per sample: built once per shape, not per call
};

class TarExtents final : public ExtentFinder {
 public:
  Extent find(const SampleRequest& r, std::uint64_t) override {
    return {tar::sample_offset(r.sample, r.shape.bytes()), tar::kBlock + r.shape.bytes()};
  }
};

// Contiguous HDF5 datasets: the data address comes from the file's metadata, looked up once per
// file through libhdf5 and remembered. libhdf5 runs under the process-wide HDF5 lock once per
// file layout, recording its calls; other files are opened by replaying those calls without the
// lock (hdf5_replay.hpp), their metadata bytes compared, so the address is the recorded one.
class Hdf5Extents final : public ExtentFinder {
 public:
  Extent find(const SampleRequest& r, std::uint64_t) override {
    const std::uint64_t address =
        offsets_.get_or_insert(r.file, [&] { return data_offset(*r.path, r.shape, r.samples_in_file); });
    return {address + r.sample * r.shape.bytes(), r.shape.bytes()};
  }

 private:
  std::uint64_t data_offset(const std::string& path, const plan::SampleShape& shape, std::uint64_t samples) {
    if (!known_.empty()) {
      storage::File file;
      if (const auto i = Hdf5Replay::run(known_, file, path, 0, Hdf5Replay::Part::open_read_close, scratch_, nullptr))
        return addresses_[*i];
      file.close();  // unlike any file seen: libhdf5 looks again
    }
    std::lock_guard lock(storage::hdf5_lock());
    storage::DriverRecording recording;
    struct Stop {
      ~Stop() { storage::record_driver_calls(nullptr); }
    } stop;
    storage::record_driver_calls(&recording);
    haddr_t offset = HADDR_UNDEF;
    {
      h5::Id fapl(storage::trainio_fapl(), H5Pclose, "H5Pcreate", path);
      h5::Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose, "H5Fopen", path);
      h5::Id dset(H5Dopen2(file, "records_0", H5P_DEFAULT), H5Dclose, "H5Dopen2", path);
      offset = H5Dget_offset(dset);
    }
    storage::record_driver_calls(nullptr);
    if (offset == HADDR_UNDEF)
      throw data_error(fmt::format("'{}': records_0 is not stored contiguously", path),
                       "reader.access=sample needs contiguous HDF5 datasets (no chunk_dims, no compression)");
    auto learned = Hdf5Replay::learn(recording, {samples, shape.bytes(), 0}, 0);
    if (learned && known_.size() < 8) {
      known_.push_back(std::move(*learned));
      addresses_.push_back(offset);
    }
    return offset;
  }
  util::FileCache<std::uint64_t> offsets_{4096};  // records_0's address in the files read last
  std::vector<Hdf5Replay> known_;          // recorded opens, one per file layout met
  std::vector<std::uint64_t> addresses_;   // records_0's address in each
  std::vector<unsigned char> scratch_;
};

}  // namespace

std::unique_ptr<ExtentFinder> whole_file_extents() { return std::make_unique<WholeFile>(); }

std::unique_ptr<ExtentFinder> sample_extents(const config::Workload& w) {
  const auto& d = w.dataset;
  switch (d.format) {
    case Format::npz:
      if (d.compression == config::Compression::zip)
        throw config_error("reader.access=sample cannot read single samples of deflated NPZ files",
                           "use reader.access=framework, or generate without dataset.compression");
      return std::make_unique<Contiguous>(npz_header);
    case Format::npy: return std::make_unique<Contiguous>(npy_header);
    case Format::indexed_binary:
    case Format::mmap_indexed_binary: return std::make_unique<Contiguous>(no_header);
    case Format::tfrecord: return std::make_unique<TfRecordExtents>();
    case Format::tar: return std::make_unique<TarExtents>();
    case Format::hdf5:
      if (!d.hdf5.chunk_dims.empty() || !d.hdf5.max_shape.empty() || d.compression != config::Compression::none ||
          d.hdf5.num_dset_per_record != 1)
        throw config_error("reader.access=sample reads HDF5 samples of one contiguous dataset only",
                           "drop hdf5.chunk_dims, max_shape, compression and num_dset_per_record, or use access=framework");
      return std::make_unique<Hdf5Extents>();
    case Format::parquet:
      throw config_error("reader.access=sample does not read Parquet files: a row is spread over column chunks",
                         "use reader.access=framework (the fork's row-group reads)");
    case Format::csv:
    case Format::jpeg:
    case Format::png:
    case Format::synthetic: return whole_file_extents();
  }
  return whole_file_extents();
}

}  // namespace trainio::format
