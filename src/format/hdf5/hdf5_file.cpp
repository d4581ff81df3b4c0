#include "format/hdf5/hdf5_file.hpp"

#include <fmt/format.h>
#include <sys/time.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <mutex>

#include "format/hdf5/hdf5_api.hpp"
#include "storage/hdf5_vfd.hpp"
#include "util/error.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

namespace {

using config::ElementType;

// Labels are written this many at a time (8 MiB of zeros), whatever the file's sample count.
constexpr hsize_t kLabelPiece = hsize_t{1} << 20;

// The HDF5 type h5py creates for a numpy dtype (little-endian, as numpy's defaults).
hid_t file_type(ElementType t, h5::Id& owned) {
  switch (t) {
    case ElementType::uint8: return H5T_STD_U8LE;
    case ElementType::int8: return H5T_STD_I8LE;
    case ElementType::uint16: return H5T_STD_U16LE;
    case ElementType::int16: return H5T_STD_I16LE;
    case ElementType::uint32: return H5T_STD_U32LE;
    case ElementType::int32: return H5T_STD_I32LE;
    case ElementType::uint64: return H5T_STD_U64LE;
    case ElementType::int64: return H5T_STD_I64LE;
    case ElementType::float32: return H5T_IEEE_F32LE;
    case ElementType::float64: return H5T_IEEE_F64LE;
    case ElementType::float16: {
      // IEEE half precision, built the way h5py builds it.
      owned = h5::Id(H5Tcopy(H5T_IEEE_F32LE), H5Tclose, "H5Tcopy", "float16");
      h5::check(H5Tset_fields(owned, 15, 10, 5, 0, 10), "H5Tset_fields", "float16");
      h5::check(H5Tset_size(owned, 2), "H5Tset_size", "float16");
      h5::check(H5Tset_ebias(owned, 15), "H5Tset_ebias", "float16");
      return owned;
    }
  }
  return H5T_STD_U8LE;
}

// Samples are written in slabs of whole chunks along the sample axis, about 8 MiB each.
std::uint64_t slab_samples(const Hdf5Layout& l) {
  std::uint64_t slab = std::max<std::uint64_t>(1, (8u << 20) / std::max<std::uint64_t>(1, l.sample_bytes_per_dataset()));
  if (!l.chunk.empty()) slab = std::max<std::uint64_t>(l.chunk[0], slab / l.chunk[0] * l.chunk[0]);
  return slab;
}

// The buffer a writer of `samples` samples of `l` fills a slab at a time.
std::uint64_t slab_buffer_bytes(const Hdf5Layout& l, std::uint64_t samples) {
  return std::min(slab_samples(l), std::max<std::uint64_t>(samples, 1)) * l.sample_bytes_per_dataset();
}

// The second libhdf5 stamps object headers with (H5_now: gettimeofday, or time() without it),
// or -1 while the two clocks disagree (time() lags at a tick): no template is made or used then.
std::int64_t wall_second() {
  timeval now{};
  ::gettimeofday(&now, nullptr);
  const std::time_t coarse = std::time(nullptr);
  return coarse == now.tv_sec ? static_cast<std::int64_t>(coarse) : -1;
}

}  // namespace

std::string dataset_name(int i) { return fmt::format("records_{}", i); }

std::uint64_t Hdf5Layout::sample_bytes_per_dataset() const {
  std::uint64_t n = config::element_size(dtype);
  for (std::size_t i = 1; i < shape.size(); ++i) n *= shape[i];
  return n;
}

Hdf5Settings::Hdf5Settings(const config::Workload& w)
    : datasets_per_record(w.dataset.hdf5.num_dset_per_record),
      chunk_dims(w.dataset.hdf5.chunk_dims),
      max_shape(w.dataset.hdf5.max_shape),
      compression(w.dataset.compression),
      compression_level(w.dataset.compression_level) {}

Hdf5Layout hdf5_layout(const Hdf5Settings& d, const plan::DataFile& f) {
  Hdf5Layout l;
  l.datasets = static_cast<int>(d.datasets_per_record);
  l.dtype = f.sample.dtype;
  // DLIO: a record's first dimension is split across the datasets; a leading 1 is dropped.
  std::vector<std::uint64_t> dims(f.sample.shape().begin(), f.sample.shape().end());
  if (!dims.empty() && l.datasets > 1) dims[0] = std::max<std::uint64_t>(1, dims[0] / static_cast<std::uint64_t>(l.datasets));
  if (dims.size() > 1 && dims[0] == 1) dims.erase(dims.begin());
  l.shape.push_back(f.num_samples);
  l.shape.insert(l.shape.end(), dims.begin(), dims.end());
  const std::size_t rank = l.shape.size();
  if (!d.chunk_dims.empty()) {
    l.chunk = d.chunk_dims;
    if (l.chunk.size() == rank - 1) l.chunk.insert(l.chunk.begin(), 1);  // per-sample chunk shape given
    if (l.chunk.size() != rank)
      throw config_error(fmt::format("dataset.hdf5.chunk_dims has {} dimensions, the datasets have {}", d.chunk_dims.size(), rank),
                         "give one chunk size per dimension (the first is along samples)");
  }
  if (!d.max_shape.empty()) {
    if (d.max_shape.size() != rank - 1)
      throw config_error(fmt::format("dataset.hdf5.max_shape has {} dimensions, a sample has {}", d.max_shape.size(), rank - 1),
                         "give the maximum size of each sample dimension");
    l.max_shape.push_back(f.num_samples);
    l.max_shape.insert(l.max_shape.end(), d.max_shape.begin(), d.max_shape.end());
    for (std::size_t i = 1; i < rank; ++i)
      if (l.max_shape[i] < l.shape[i])
        throw config_error(fmt::format("dataset.hdf5.max_shape[{}] = {} is smaller than the data ({})", i - 1, l.max_shape[i], l.shape[i]),
                           "raise max_shape or shrink the records");
    if (l.chunk.empty()) {  // resizable datasets must be chunked; h5py picks a chunk: one sample
      l.chunk = l.shape;
      l.chunk[0] = 1;
    }
  }
  for (std::size_t i = 0; i < l.chunk.size(); ++i) {
    const std::uint64_t limit = l.max_shape.empty() ? l.shape[i] : l.max_shape[i];
    if (l.chunk[i] == 0 || l.chunk[i] > std::max<std::uint64_t>(limit, 1))
      throw config_error(fmt::format("dataset.hdf5.chunk_dims[{}] = {} does not fit a dataset dimension of {}", i, l.chunk[i], limit),
                         "chunk sizes go from 1 to the dataset's size in each dimension");
  }
  if (d.compression == config::Compression::gzip) {
    l.gzip_level = static_cast<int>(d.compression_level);
    if (l.chunk.empty()) {  // filters need chunks; h5py chooses one sample per chunk the same way
      l.chunk = l.shape;
      l.chunk[0] = 1;
    }
  } else if (d.compression != config::Compression::none) {
    throw config_error(fmt::format("dataset.compression '{}' is not available for HDF5 here", config::to_string(d.compression)),
                       d.compression == config::Compression::lzf
                           ? "lzf is h5py's own filter, not part of libhdf5: use gzip"
                           : "use gzip, or none");
  }
  return l;
}

void Hdf5Writer::write(const plan::DataFile& f, storage::NewObject& out, ContentSource& content) {
  const std::string& path = out.local_path();
  if (path.empty()) throw internal_error("HDF5 files are written by libhdf5, which writes local files only");
  const Hdf5Layout l = hdf5_layout(settings_, f);
  if (template_ && template_layout_ == l && template_second_ == wall_second()) {
    template_->write(path, content, buffer_, scratch_);
    ++replayed_;
    return;
  }
  write_through_hdf5(f, l, path, content);
}

void Hdf5Writer::write_through_hdf5(const plan::DataFile& f, const Hdf5Layout& l, const std::string& path,
                                    ContentSource& content) {
  std::lock_guard lock(storage::hdf5_lock());
  if (fapl_.get() < 0) fapl_ = h5::Id(storage::trainio_fapl(), H5Pclose, "H5Pcreate", path);
  template_.reset();
  // Chunked datasets' addresses and compressed sizes follow from the data: no template.
  if (!l.chunk.empty() || l.gzip_level >= 0) {
    write_file(f, path, fapl_, H5P_DEFAULT, {0, f.num_samples}, 0, 1, content);
    return;
  }
  storage::DriverRecording recording;
  struct Stop {
    ~Stop() { storage::record_driver_calls(nullptr); }
  } stop;
  std::vector<Hdf5RawExtent> raw;
  const std::int64_t first = wall_second();
  storage::record_driver_calls(&recording);
  write_file(f, path, fapl_, H5P_DEFAULT, {0, f.num_samples}, 0, 1, content, &raw);
  storage::record_driver_calls(nullptr);
  // A file written across a second's tick may hold two times: it is no template.
  if (first < 0 || wall_second() != first) return;
  template_ = Hdf5WriteTemplate::learn(recording, raw);
  template_layout_ = l;
  template_second_ = first;
}

std::uint64_t Hdf5Writer::write_shared(const plan::DataFile& f, const std::string& path, SharedWriting& job,
                                       ContentSource& content) {
  std::lock_guard lock(storage::hdf5_lock());
  h5::Id fapl(job.hdf5_file_access(), H5Pclose, "H5Pset_fapl_mpio", path);
  h5::Id dxpl(job.hdf5_collective_transfer(), H5Pclose, "H5Pset_dxpl_mpio", path);
  const SampleRange mine = share_of(f.num_samples, job.rank(), job.ranks());
  write_file(f, path, fapl, dxpl, mine, job.rank(), job.ranks(), content);
  const Hdf5Layout l = hdf5_layout(settings_, f);
  return (mine.last - mine.first) * l.sample_bytes_per_dataset() * static_cast<std::uint64_t>(l.datasets);
}

void Hdf5Writer::prepare(const plan::DataFile& f) {
  const Hdf5Layout l = hdf5_layout(settings_, f);
  buffer_.resize(std::max<std::size_t>(buffer_.size(), slab_buffer_bytes(l, f.num_samples)));
  std::lock_guard lock(storage::hdf5_lock());
  if (fapl_.get() < 0) fapl_ = h5::Id(storage::trainio_fapl(), H5Pclose, "H5Pcreate", f.path);
}

void Hdf5Writer::write_file(const plan::DataFile& f, const std::string& path, hid_t fapl, hid_t dxpl,
                            SampleRange mine, int writer, int writers, ContentSource& content,
                            std::vector<Hdf5RawExtent>* raw) {
  const Hdf5Layout l = hdf5_layout(settings_, f);
  h5::check(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "H5Pset_libver_bounds", path);
  h5::Id file(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl), H5Fclose, "H5Fcreate", path);
  h5::Id half;
  const hid_t type = file_type(l.dtype, half);
  const auto rank = static_cast<int>(l.shape.size());
  std::vector<hsize_t> dims(l.shape.begin(), l.shape.end());
  std::vector<hsize_t> maxdims = l.max_shape.empty() ? dims : std::vector<hsize_t>(l.max_shape.begin(), l.max_shape.end());
  const std::uint64_t per_sample = l.sample_bytes_per_dataset();
  // With several writers every rank makes the same number of (collective) writes, some empty.
  const std::uint64_t slab = slab_samples(l);
  const std::uint64_t my_samples = mine.last - mine.first;
  const std::uint64_t rounds = (largest_share(f.num_samples, writers) + slab - 1) / slab;
  buffer_.resize(std::max<std::size_t>(buffer_.size(), slab_buffer_bytes(l, my_samples)));
  for (int i = 0; i < l.datasets; ++i) {
    const std::string name = dataset_name(i);
    h5::Id space(H5Screate_simple(rank, dims.data(), maxdims.data()), H5Sclose, "H5Screate_simple", path);
    h5::Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate", path);
    if (!l.chunk.empty()) {
      std::vector<hsize_t> chunk(l.chunk.begin(), l.chunk.end());
      h5::check(H5Pset_chunk(dcpl, rank, chunk.data()), "H5Pset_chunk", path);
    }
    if (l.gzip_level >= 0) h5::check(H5Pset_deflate(dcpl, static_cast<unsigned>(l.gzip_level)), "H5Pset_deflate", path);
    h5::Id dset(H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose, "H5Dcreate2", path);
    for (std::uint64_t r = 0; r < rounds; ++r) {
      const std::uint64_t at = mine.first + std::min(my_samples, r * slab);
      const std::uint64_t n = std::min(slab, mine.last - at);
      std::vector<hsize_t> start(static_cast<std::size_t>(rank), 0), count(dims);
      start[0] = at;
      count[0] = std::max<std::uint64_t>(n, 1);
      h5::Id memory(H5Screate_simple(rank, count.data(), nullptr), H5Sclose, "H5Screate_simple", path);
      if (n == 0) {  // nothing left for this rank: join the collective write with empty selections
        h5::check(H5Sselect_none(space), "H5Sselect_none", path);
        h5::check(H5Sselect_none(memory), "H5Sselect_none", path);
      } else {
        content.seek(static_cast<std::uint64_t>(i) * l.shape[0] * per_sample + at * per_sample);
        content.fill(buffer_.data(), n * per_sample);
        h5::check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
                  "H5Sselect_hyperslab", path);
      }
      h5::check(H5Dwrite(dset, type, memory, space, dxpl, buffer_.data()), "H5Dwrite", path);
    }
    if (raw) raw->push_back({H5Dget_offset(dset), l.shape[0] * per_sample, false, static_cast<std::uint64_t>(i) * l.shape[0] * per_sample});
    dset.close("H5Dclose", path);
  }
  // labels: int64 zeros, one per sample (DLIO's [0] * num_samples), written by one rank, a
  // piece of at most 8 MiB at a time from one buffer of zeros: never 8 bytes per sample in memory.
  const hsize_t n = f.num_samples;
  h5::Id label_space(H5Screate_simple(1, &n, nullptr), H5Sclose, "H5Screate_simple", path);
  h5::Id labels(H5Dcreate2(file, "labels", H5T_STD_I64LE, label_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
                "H5Dcreate2", path);
  const std::vector<std::int64_t> zeros(static_cast<std::size_t>(std::min<hsize_t>(n, kLabelPiece)), 0);
  hsize_t first = 0;
  do {  // every rank makes the same calls (the write is collective under MPI-IO)
    const hsize_t count = std::min<hsize_t>(kLabelPiece, n - first);
    h5::Id label_memory(H5Screate_simple(1, &count, nullptr), H5Sclose, "H5Screate_simple", path);
    if (writer != 0) {
      h5::check(H5Sselect_none(label_space), "H5Sselect_none", path);
      h5::check(H5Sselect_none(label_memory), "H5Sselect_none", path);
    } else {
      h5::check(H5Sselect_hyperslab(label_space, H5S_SELECT_SET, &first, nullptr, &count, nullptr), "H5Sselect_hyperslab",
                path);
    }
    h5::check(H5Dwrite(labels, H5T_NATIVE_INT64, label_memory, label_space, dxpl, zeros.data()), "H5Dwrite", path);
    first += count;
  } while (first < n);
  if (raw) raw->push_back({H5Dget_offset(labels), n * sizeof(std::int64_t), true, 0});
  labels.close("H5Dclose", path);
  file.close("H5Fclose", path);
}

std::optional<std::string> validate_hdf5(const Hdf5Settings& settings, const plan::DataFile& f) {
  const Hdf5Layout l = hdf5_layout(settings, f);
  std::lock_guard lock(storage::hdf5_lock());
  try {
    h5::Id fapl(storage::trainio_fapl(), H5Pclose, "H5Pcreate", f.path);
    h5::Id file(H5Fopen(f.path.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose, "H5Fopen", f.path);
    util::Bytes buffer;
    for (int i = 0; i < l.datasets; ++i) {
      const std::string name = dataset_name(i);
      if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) return fmt::format("no dataset '{}'", name);
      h5::Id dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, "H5Dopen2", f.path);
      h5::Id space(H5Dget_space(dset), H5Sclose, "H5Dget_space", f.path);
      const std::vector<hsize_t> dims = h5::simple_extent(space, f.path);
      if (std::vector<std::uint64_t>(dims.begin(), dims.end()) != l.shape)
        return fmt::format("'{}' has another shape than the workload's", name);
      h5::Id type(H5Dget_type(dset), H5Tclose, "H5Dget_type", f.path);
      if (H5Tget_size(type) != config::element_size(l.dtype)) return fmt::format("'{}' has another element type", name);
      // Read everything back: chunks and filters must decode.
      const std::uint64_t per_sample = l.sample_bytes_per_dataset();
      for (std::uint64_t at = 0; at < l.shape[0]; ++at) {
        buffer.resize(per_sample);
        std::vector<hsize_t> start(dims.size(), 0), count(dims);
        start[0] = at;
        count[0] = 1;
        h5::check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), "H5Sselect_hyperslab", f.path);
        h5::Id memory(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose, "H5Screate_simple", f.path);
        h5::check(H5Dread(dset, type, memory, space, H5P_DEFAULT, buffer.data()), "H5Dread", f.path);
      }
    }
    if (H5Lexists(file, "labels", H5P_DEFAULT) <= 0) return std::string("no dataset 'labels'");
    h5::Id labels(H5Dopen2(file, "labels", H5P_DEFAULT), H5Dclose, "H5Dopen2", f.path);
    h5::Id space(H5Dget_space(labels), H5Sclose, "H5Dget_space", f.path);
    const hssize_t entries = H5Sget_simple_extent_npoints(space);
    h5::check(entries, "H5Sget_simple_extent_npoints", f.path);
    if (entries != static_cast<hssize_t>(f.num_samples))
      return fmt::format("'labels' holds {} entries, expected {}", entries, f.num_samples);
    space.close("H5Sclose", f.path);
    labels.close("H5Dclose", f.path);
    file.close("H5Fclose", f.path);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::config) throw;
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace trainio::format
