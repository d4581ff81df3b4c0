#include "format/extents.hpp"

#include <fmt/format.h>

#include <list>
#include <mutex>
#include <unordered_map>

#include "format/hdf5_api.hpp"
#include "format/npy_file.hpp"
#include "format/tar.hpp"
#include "format/tfrecord.hpp"
#include "format/zip.hpp"
#include "storage/hdf5_vfd.hpp"
#include "util/error.hpp"

namespace trainio::format {

namespace {

using config::Format;

class WholeFile final : public ExtentFinder {
 public:
  bool needs_file_size() const override { return true; }
  Extent find(const std::string&, const plan::SampleShape&, std::uint64_t, std::uint64_t, std::uint64_t size) override {
    return {0, size};
  }
};

// Samples back to back after a header of `header(shape, samples)` bytes.
class Contiguous final : public ExtentFinder {
 public:
  using Header = std::uint64_t (*)(const plan::SampleShape&, std::uint64_t);
  explicit Contiguous(Header header) : header_(header) {}
  Extent find(const std::string&, const plan::SampleShape& shape, std::uint64_t samples, std::uint64_t sample,
              std::uint64_t) override {
    const std::uint64_t bytes = shape.bytes();
    return {header_(shape, samples) + sample * bytes, bytes};
  }

 private:
  Header header_;
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
  Extent find(const std::string&, const plan::SampleShape& shape, std::uint64_t, std::uint64_t sample,
              std::uint64_t) override {
    const auto frame = tfrecord::example_frame(shape.bytes(), shape.ndims ? static_cast<std::int64_t>(shape.dims[0]) : 0);
    return {sample * frame.record_bytes(), frame.record_bytes()};
  }
};

class TarExtents final : public ExtentFinder {
 public:
  Extent find(const std::string&, const plan::SampleShape& shape, std::uint64_t, std::uint64_t sample,
              std::uint64_t) override {
    return {tar::sample_offset(sample, shape.bytes()), tar::kBlock + shape.bytes()};
  }
};

// Contiguous HDF5 datasets: the data address comes from the file's metadata, read once per file
// (through libhdf5) and remembered.
class Hdf5Extents final : public ExtentFinder {
 public:
  Extent find(const std::string& path, const plan::SampleShape& shape, std::uint64_t, std::uint64_t sample,
              std::uint64_t) override {
    auto it = offsets_.find(path);
    if (it == offsets_.end()) {
      if (offsets_.size() >= 4096) offsets_.clear();
      it = offsets_.emplace(path, data_offset(path)).first;
    }
    return {it->second + sample * shape.bytes(), shape.bytes()};
  }

 private:
  static std::uint64_t data_offset(const std::string& path) {
    std::lock_guard lock(storage::hdf5_lock());
    h5::Id fapl(storage::trainio_fapl(), H5Pclose, "H5Pcreate", path);
    h5::Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose, "H5Fopen", path);
    h5::Id dset(H5Dopen2(file, "records_0", H5P_DEFAULT), H5Dclose, "H5Dopen2", path);
    const haddr_t offset = H5Dget_offset(dset);
    if (offset == HADDR_UNDEF)
      throw data_error(fmt::format("'{}': records_0 is not stored contiguously", path),
                       "reader.access=sample needs contiguous HDF5 datasets (no chunk_dims, no compression)");
    return offset;
  }
  std::unordered_map<std::string, std::uint64_t> offsets_;
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
    case Format::csv:
    case Format::jpeg:
    case Format::png:
    case Format::synthetic: return whole_file_extents();
  }
  return whole_file_extents();
}

}  // namespace trainio::format
