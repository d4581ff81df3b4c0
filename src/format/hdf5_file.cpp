#include "format/hdf5_file.hpp"

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "format/hdf5_api.hpp"
#include "mpi/shared_file.hpp"
#include "storage/io_observer.hpp"
#include "util/clock.hpp"
#include "storage/hdf5_vfd.hpp"
#include "util/error.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

namespace {

using config::ElementType;

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

std::string dataset_name(int i) { return fmt::format("records_{}", i); }

}  // namespace

std::uint64_t Hdf5Layout::sample_bytes_per_dataset() const {
  std::uint64_t n = config::element_size(dtype);
  for (std::size_t i = 1; i < shape.size(); ++i) n *= shape[i];
  return n;
}

Hdf5Layout hdf5_layout(const config::Workload& w, const plan::DataFile& f) {
  const auto& d = w.dataset;
  Hdf5Layout l;
  l.datasets = static_cast<int>(d.hdf5.num_dset_per_record);
  l.dtype = f.sample.dtype;
  // DLIO: a record's first dimension is split across the datasets; a leading 1 is dropped.
  std::vector<std::uint64_t> dims(f.sample.shape().begin(), f.sample.shape().end());
  if (!dims.empty() && l.datasets > 1) dims[0] = std::max<std::uint64_t>(1, dims[0] / static_cast<std::uint64_t>(l.datasets));
  if (dims.size() > 1 && dims[0] == 1) dims.erase(dims.begin());
  l.shape.push_back(f.num_samples);
  l.shape.insert(l.shape.end(), dims.begin(), dims.end());
  const std::size_t rank = l.shape.size();
  if (!d.hdf5.chunk_dims.empty()) {
    l.chunk = d.hdf5.chunk_dims;
    if (l.chunk.size() == rank - 1) l.chunk.insert(l.chunk.begin(), 1);  // per-sample chunk shape given
    if (l.chunk.size() != rank)
      throw config_error(fmt::format("dataset.hdf5.chunk_dims has {} dimensions, the datasets have {}", d.hdf5.chunk_dims.size(), rank),
                         "give one chunk size per dimension (the first is along samples)");
  }
  if (!d.hdf5.max_shape.empty()) {
    if (d.hdf5.max_shape.size() != rank - 1)
      throw config_error(fmt::format("dataset.hdf5.max_shape has {} dimensions, a sample has {}", d.hdf5.max_shape.size(), rank - 1),
                         "give the maximum size of each sample dimension");
    l.max_shape.push_back(f.num_samples);
    l.max_shape.insert(l.max_shape.end(), d.hdf5.max_shape.begin(), d.hdf5.max_shape.end());
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

void Hdf5Writer::write(const plan::DataFile& f, const std::string& path, ContentSource& content) {
  std::lock_guard lock(storage::hdf5_lock());
  h5::Id fapl(storage::trainio_fapl(), H5Pclose, "H5Pcreate", path);
  write_file(f, path, fapl, H5P_DEFAULT, {0, f.num_samples}, nullptr, content);
}

void Hdf5Writer::write_shared(const plan::DataFile& f, const std::string& path, const mpi::Comm& comm,
                              ContentSource& content) {
  std::lock_guard lock(storage::hdf5_lock());
  h5::Id fapl(mpi::hdf5_parallel_fapl(), H5Pclose, "H5Pset_fapl_mpio", path);
  h5::Id dxpl(mpi::hdf5_collective_dxpl(), H5Pclose, "H5Pset_dxpl_mpio", path);
  const SampleRange mine = share_of(f.num_samples, comm.rank(), comm.size());
  const auto start = util::now_ns();
  write_file(f, path, fapl, dxpl, mine, &comm, content);
  // MPI-IO moved the bytes, not the trainio driver: account for this rank's share here.
  const std::uint64_t bytes = (mine.last - mine.first) * hdf5_layout(workload_, f).sample_bytes_per_dataset() *
                              static_cast<std::uint64_t>(hdf5_layout(workload_, f).datasets);
  storage::observe_path_op(storage::Op::write, path, start, bytes);
}

void Hdf5Writer::write_file(const plan::DataFile& f, const std::string& path, hid_t fapl, hid_t dxpl,
                            SampleRange mine, const mpi::Comm* comm, ContentSource& content) {
  const Hdf5Layout l = hdf5_layout(workload_, f);
  h5::check(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "H5Pset_libver_bounds", path);
  h5::Id file(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl), H5Fclose, "H5Fcreate", path);
  h5::Id half;
  const hid_t type = file_type(l.dtype, half);
  const auto rank = static_cast<int>(l.shape.size());
  std::vector<hsize_t> dims(l.shape.begin(), l.shape.end());
  std::vector<hsize_t> maxdims = l.max_shape.empty() ? dims : std::vector<hsize_t>(l.max_shape.begin(), l.max_shape.end());
  const std::uint64_t per_sample = l.sample_bytes_per_dataset();
  // Write in slabs of whole chunks along the sample axis, about 8 MiB each. With several
  // writers every rank makes the same number of (collective) writes, some of them empty.
  std::uint64_t slab = std::max<std::uint64_t>(1, (8u << 20) / std::max<std::uint64_t>(1, per_sample));
  if (!l.chunk.empty()) slab = std::max<std::uint64_t>(l.chunk[0], slab / l.chunk[0] * l.chunk[0]);
  const std::uint64_t my_samples = mine.last - mine.first;
  const std::uint64_t my_rounds = (my_samples + slab - 1) / slab;
  const std::uint64_t rounds = comm ? comm->max(my_rounds) : my_rounds;
  if (buffer_.size() < std::min(slab, std::max<std::uint64_t>(my_samples, 1)) * per_sample)
    buffer_.resize(std::min(slab, std::max<std::uint64_t>(my_samples, 1)) * per_sample);
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
    dset.close("H5Dclose", path);
  }
  // labels: int64 zeros, one per sample (DLIO's [0] * num_samples), written by one rank.
  const hsize_t n = f.num_samples;
  h5::Id label_space(H5Screate_simple(1, &n, nullptr), H5Sclose, "H5Screate_simple", path);
  h5::Id labels(H5Dcreate2(file, "labels", H5T_STD_I64LE, label_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
                "H5Dcreate2", path);
  const std::vector<std::int64_t> zeros(f.num_samples, 0);
  h5::Id label_memory(H5Screate_simple(1, &n, nullptr), H5Sclose, "H5Screate_simple", path);
  if (comm && !comm->is_root()) {
    h5::check(H5Sselect_none(label_space), "H5Sselect_none", path);
    h5::check(H5Sselect_none(label_memory), "H5Sselect_none", path);
  }
  h5::check(H5Dwrite(labels, H5T_NATIVE_INT64, label_memory, label_space, dxpl, zeros.data()), "H5Dwrite", path);
  labels.close("H5Dclose", path);
  file.close("H5Fclose", path);
}

void hdf5_read_sample(hid_t file, const std::string& path, const Hdf5Layout& l, std::uint64_t sample, void* buffer) {
  for (int i = 0; i < l.datasets; ++i) {
    const std::string name = dataset_name(i);
    h5::Id dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, "H5Dopen2", path);
    h5::Id space(H5Dget_space(dset), H5Sclose, "H5Dget_space", path);
    const int rank = H5Sget_simple_extent_ndims(space);
    std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    if (std::vector<std::uint64_t>(dims.begin(), dims.end()) != l.shape)
      throw data_error(fmt::format("'{}': dataset '{}' has another shape than the workload expects", path, name),
                       "the dataset was generated for another workload: regenerate it with 'trainio generate'");
    std::vector<hsize_t> start(dims.size(), 0), count(dims);
    start[0] = sample;
    count[0] = 1;
    h5::check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
              "H5Sselect_hyperslab", path);
    // h5py reads into an array of the sample's shape (the leading 1 dropped).
    h5::Id memory(H5Screate_simple(rank - 1, count.data() + 1, nullptr), H5Sclose, "H5Screate_simple", path);
    h5::Id type(H5Dget_type(dset), H5Tclose, "H5Dget_type", path);
    h5::check(H5Dread(dset, type, memory, space, H5P_DEFAULT, buffer), "H5Dread", path);
  }
}

namespace {

// Which of the reader's datasets can be replayed without libhdf5 (see Hdf5Reader).
bool contiguous(const config::Workload& w) {
  return w.dataset.hdf5.chunk_dims.empty() && w.dataset.hdf5.max_shape.empty() &&
         w.dataset.compression == config::Compression::none;
}

}  // namespace

Hdf5Reader::Hdf5Reader(const config::Workload& w, bool keep_open)
    : workload_(w),
      keep_open_(keep_open),
      replay_(contiguous(w)                                                            ? Replay::contiguous
              : w.dataset.compression == config::Compression::none && !keep_open ? Replay::per_sample
                                                                                 : Replay::none) {
  static std::once_flag noted;
  if (replay_ == Replay::none && w.reader.read_threads > 1)
    std::call_once(noted, [&] {
      spdlog::info("HDF5: {} datasets are read through libhdf5, which is not thread-safe here: reader threads take "
                   "turns (one HDF5 read in flight per process)",
                   w.dataset.compression != config::Compression::none ? "compressed" : "chunked (with read_type: memory)");
    });
}

Hdf5Reader::Template& Hdf5Reader::template_for(const plan::SampleShape& shape, std::uint64_t samples_in_file) {
  const std::uint64_t bytes = shape.bytes();
  for (Template& t : templates_)
    if (t.samples == samples_in_file && t.sample_bytes == bytes) return t;
  templates_.push_back({samples_in_file, bytes, {}, {}, true});
  return templates_.back();
}

void Hdf5Reader::keep(const std::string& path, storage::File file, std::size_t layout) {
  if (files_.size() >= kMaxOpen) files_.erase(files_.begin());  // DLIO keeps every file open; trainio bounds the descriptors
  files_.emplace(path, Kept{std::move(file), layout});
}

void Hdf5Reader::read_through_hdf5(const std::string& path, const Hdf5Layout& l, std::uint64_t sample, Template* t) {
  std::lock_guard lock(storage::hdf5_lock());
  storage::DriverRecording recording;
  recording.keep_file = keep_open_;
  struct Stop {  // declared before the HDF5 ids: recording stops after they are closed
    ~Stop() { storage::record_driver_calls(nullptr); }
  } stop;
  if (t) storage::record_driver_calls(&recording);
  {
    h5::Id owned;  // the file when it is closed after this sample
    hid_t file = -1;
    if (const auto it = open_.find(path); keep_open_ && !t && it != open_.end()) {
      file = it->second;
    } else {
      h5::Id fapl(storage::trainio_fapl(), H5Pclose, "H5Pcreate", path);
      owned = h5::Id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose, "H5Fopen", path);
      file = owned;
    }
    hdf5_read_sample(file, path, l, sample, buffer_.data());
    if (!keep_open_ || t) {
      owned.close("H5Fclose", path);  // with keep_open and a recording the driver keeps the descriptor
    } else if (owned.get() >= 0) {
      if (open_.size() >= kMaxOpen) {
        H5Fclose(open_.begin()->second);
        open_.erase(open_.begin());
      }
      open_.emplace(path, owned.release());
    }
  }
  if (!t) return;
  storage::record_driver_calls(nullptr);
  const Hdf5ReplayShape shape{l.shape[0], l.sample_bytes_per_dataset(), l.datasets};
  const auto model = replay_ == Replay::contiguous ? Hdf5Replay::Model::contiguous : Hdf5Replay::Model::this_sample;
  auto learned = Hdf5Replay::learn(recording, shape, sample, model);
  if (!learned) {
    t->replayable = false;
    static std::once_flag noted;
    std::call_once(noted, [&] {
      spdlog::warn("HDF5: libhdf5's calls on '{}' do not follow the replay's model; samples of its shape are read "
                   "through libhdf5 under the process-wide lock (one HDF5 read in flight per process)", path);
    });
  }
  auto& known = replay_ == Replay::contiguous ? t->replays : t->per_sample[sample];
  const std::size_t layout = known.size();
  if (learned && layout < kMaxLayouts && recordings_ < kMaxRecordings) {
    known.push_back(std::move(*learned));
    ++recordings_;
  } else if (learned && recordings_ >= kMaxRecordings) {
    static std::once_flag noted;
    std::call_once(noted, [] {
      spdlog::info("HDF5: a reader thread holds {} recordings of libhdf5's calls; samples not yet recorded are read "
                   "through libhdf5 under the process-wide lock", kMaxRecordings);
    });
  }
  if (keep_open_ && recording.kept.is_open()) {
    if (layout < known.size())
      keep(path, std::move(recording.kept), layout);
    else
      recording.kept.close();  // not replayable: libhdf5 opens the file for its next sample again
  }
}

std::uint64_t Hdf5Reader::read(const std::string& path, const plan::SampleShape& shape, std::uint64_t samples_in_file,
                               std::uint64_t sample) {
  Template* t = replay_ != Replay::none ? &template_for(shape, samples_in_file) : nullptr;
  if (t && !t->replayable) t = nullptr;
  if (t && replay_ == Replay::per_sample && samples_in_file > kMaxIndexedSamples) {
    t->replayable = false;  // one slot per sample index would not stay small
    t = nullptr;
    static std::once_flag noted;
    std::call_once(noted, [&] {
      spdlog::info("HDF5: chunked files of more than {} samples are read through libhdf5 under the process-wide lock "
                   "(one HDF5 read in flight per process)", kMaxIndexedSamples);
    });
  }
  if (t && replay_ == Replay::per_sample && t->per_sample.size() < samples_in_file) t->per_sample.resize(samples_in_file);
  if (t && sample >= samples_in_file) t = nullptr;  // libhdf5 reports it
  const std::span<const Hdf5Replay> known =
      !t ? std::span<const Hdf5Replay>() : replay_ == Replay::contiguous ? t->replays : t->per_sample[sample];
  if (!known.empty()) {
    const Hdf5ReplayShape& s = known.front().shape();
    const std::uint64_t bytes = s.sample_bytes * static_cast<std::uint64_t>(s.datasets);
    for (const Hdf5Replay& r : known)
      if (buffer_.size() < r.data_bytes()) buffer_.resize(r.data_bytes());
    if (keep_open_) {
      if (const auto it = files_.find(path); it != files_.end()) {
        Hdf5Replay::run(known.subspan(it->second.layout, 1), it->second.file, path, sample, Hdf5Replay::Part::read,
                        scratch_, buffer_.data());
        return bytes;
      }
    }
    storage::File file;
    const auto part = keep_open_ ? Hdf5Replay::Part::open_read : Hdf5Replay::Part::open_read_close;
    if (const auto layout = Hdf5Replay::run(known, file, path, sample, part, scratch_, buffer_.data())) {
      if (keep_open_) keep(path, std::move(file), *layout);
      return bytes;
    }
    // The file's metadata differ from every recorded file of its shape: libhdf5 reads the sample
    // (and is recorded), after the calls the replay made up to the first difference.
    file.close();
    static std::once_flag noted;
    std::call_once(noted, [&] {
      spdlog::warn("HDF5: '{}' is laid out unlike the files read before it; its sample was read again through libhdf5 "
                   "(once per reader thread and layout)", path);
    });
  }
  plan::DataFile f;
  f.path = path;
  f.sample = shape;
  f.num_samples = samples_in_file;
  const Hdf5Layout l = hdf5_layout(workload_, f);
  const std::uint64_t per_sample = l.sample_bytes_per_dataset();
  const std::size_t need = std::max<std::size_t>(per_sample, Hdf5ReplayShape{}.sieve_bytes);
  if (buffer_.size() < need) buffer_.resize(need);
  read_through_hdf5(path, l, sample, t);
  return per_sample * static_cast<std::uint64_t>(l.datasets);
}

Hdf5Reader::~Hdf5Reader() {
  std::lock_guard lock(storage::hdf5_lock());
  for (const auto& [path, id] : open_) H5Fclose(id);
}

std::optional<std::string> validate_hdf5(const config::Workload& w, const plan::DataFile& f) {
  const Hdf5Layout l = hdf5_layout(w, f);
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
      const int rank = H5Sget_simple_extent_ndims(space);
      std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
      H5Sget_simple_extent_dims(space, dims.data(), nullptr);
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
    if (H5Sget_simple_extent_npoints(space) != static_cast<hssize_t>(f.num_samples))
      return fmt::format("'labels' holds {} entries, expected {}", H5Sget_simple_extent_npoints(space), f.num_samples);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::config) throw;
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace trainio::format
