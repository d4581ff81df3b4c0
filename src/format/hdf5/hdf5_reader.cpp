// Hdf5Reader: libhdf5's calls recorded under the HDF5 lock and replayed without it (see
// hdf5_file.hpp and hdf5_replay.hpp).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <span>

#include "format/hdf5/hdf5_api.hpp"
#include "format/hdf5/hdf5_file.hpp"
#include "storage/hdf5_vfd.hpp"
#include "util/error.hpp"

namespace trainio::format {

void hdf5_read_sample(hid_t file, const std::string& path, const Hdf5Layout& l, std::uint64_t sample, void* buffer) {
  // Fixed arrays, not vectors: trainio's part of a sample read through libhdf5 allocates nothing.
  std::array<hsize_t, H5S_MAX_RANK> dims{}, start{}, count{};
  for (int i = 0; i < l.datasets; ++i) {
    const std::string name = dataset_name(i);  // short enough for the string's own storage
    h5::Id dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, "H5Dopen2", path);
    h5::Id space(H5Dget_space(dset), H5Sclose, "H5Dget_space", path);
    const int rank = H5Sget_simple_extent_ndims(space);
    h5::check(rank, "H5Sget_simple_extent_ndims", path);
    h5::check(H5Sget_simple_extent_dims(space, dims.data(), nullptr), "H5Sget_simple_extent_dims", path);
    if (!std::equal(dims.begin(), dims.begin() + rank, l.shape.begin(), l.shape.end()))
      throw data_error(fmt::format("'{}': dataset '{}' has another shape than the workload expects", path, name),
                       "the dataset was generated for another workload: regenerate it with 'trainio generate'");
    std::fill(start.begin(), start.end(), 0);
    std::copy(dims.begin(), dims.begin() + rank, count.begin());
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
bool contiguous(const Hdf5Settings& s) {
  return s.chunk_dims.empty() && s.max_shape.empty() && s.compression == config::Compression::none;
}

}  // namespace

const Hdf5Layout& Hdf5Reader::layout_of(const plan::SampleShape& shape, std::uint64_t samples) {
  return layout_.get(shape, samples, [&] {
    plan::DataFile f;
    f.sample = shape;
    f.num_samples = samples;
    return hdf5_layout(settings_, f);
  });
}

Hdf5Reader::Hdf5Reader(const Hdf5Settings& settings, bool keep_open, std::int64_t read_threads)
    : settings_(settings),
      keep_open_(keep_open),
      replay_(contiguous(settings)                                                            ? Replay::contiguous
              : settings.compression == config::Compression::none && !keep_open ? Replay::per_sample
                                                                                : Replay::none) {
  static std::once_flag noted;
  if (replay_ == Replay::none && read_threads > 1)
    std::call_once(noted, [&] {
      spdlog::info("HDF5: {} datasets are read through libhdf5, which is not thread-safe here: reader threads take "
                   "turns (one HDF5 read in flight per process)",
                   settings.compression != config::Compression::none ? "compressed" : "chunked (with read_type: memory)");
    });
}

namespace {

// Says once per process and bound that samples past a reader thread's bound are read through
// libhdf5 instead of replayed.
void note_unrecorded(std::once_flag& once, const char* what, std::uint64_t bound) {
  std::call_once(once, [&] {
    spdlog::info("HDF5: a reader thread holds at most {} {}; samples not recorded are read through libhdf5 under "
                 "the process-wide lock (one HDF5 read in flight per process)", bound, what);
  });
}

}  // namespace

Hdf5Reader::Template* Hdf5Reader::template_for(const plan::SampleShape& shape, std::uint64_t samples_in_file) {
  const std::pair key{samples_in_file, shape.bytes()};
  if (const auto it = templates_.find(key); it != templates_.end()) return &it->second;
  if (templates_.size() >= kMaxTemplates) {
    static std::once_flag once;
    note_unrecorded(once, "file shapes' recordings", kMaxTemplates);
    return nullptr;
  }
  return &templates_.emplace(key, Template{samples_in_file, key.second, {}, {}, true}).first->second;
}

void Hdf5Reader::read_through_hdf5(const SampleRequest& r, const Hdf5Layout& l, Template* t) {
  const std::string& path = *r.path;
  const std::uint64_t sample = r.sample;
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
    if (h5::Id* kept = keep_open_ && !t ? open_.find(r.file) : nullptr) {
      file = *kept;
    } else {
      if (fapl_.get() < 0) fapl_ = h5::Id(storage::trainio_fapl(), H5Pclose, "H5Pcreate", path);  // one per reader
      owned = h5::Id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl_), H5Fclose, "H5Fopen", path);
      file = owned;
    }
    hdf5_read_sample(file, path, l, sample, buffer_.data());
    if (!keep_open_ || t) {
      owned.close("H5Fclose", path);  // with keep_open and a recording the driver keeps the descriptor
    } else if (owned.get() >= 0) {
      open_.insert(r.file, std::move(owned));  // may close the least recently used, under the lock
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
    static std::once_flag once;
    note_unrecorded(once, "recordings of libhdf5's calls", kMaxRecordings);
  }
  if (keep_open_ && recording.kept.is_open()) {
    if (layout < known.size())
      files_.insert(r.file, Kept{std::move(recording.kept), layout});
    else
      recording.kept.close();  // not replayable: libhdf5 opens the file for its next sample again
  }
}

std::uint64_t Hdf5Reader::read(const SampleRequest& r) {
  const std::string& path = *r.path;
  const plan::SampleShape& shape = r.shape;
  const std::uint64_t samples_in_file = r.samples_in_file;
  const std::uint64_t sample = r.sample;
  Template* t = replay_ != Replay::none ? template_for(shape, samples_in_file) : nullptr;
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
  if (t && replay_ == Replay::per_sample && t->per_sample.size() < samples_in_file) {
    const std::uint64_t more = samples_in_file - t->per_sample.size();
    if (indexed_slots_ + more > kMaxIndexedSlots) {
      static std::once_flag once;
      note_unrecorded(once, "sample slots for chunked files' recordings", kMaxIndexedSlots);
      t = nullptr;
    } else {
      t->per_sample.resize(samples_in_file);
      indexed_slots_ += more;
    }
  }
  if (t && sample >= samples_in_file) t = nullptr;  // libhdf5 reports it
  const std::span<const Hdf5Replay> known =
      !t ? std::span<const Hdf5Replay>() : replay_ == Replay::contiguous ? t->replays : t->per_sample[sample];
  if (!known.empty()) {
    const Hdf5ReplayShape& s = known.front().shape();
    const std::uint64_t bytes = s.sample_bytes * static_cast<std::uint64_t>(s.datasets);
    for (const Hdf5Replay& replay : known)
      if (buffer_.size() < replay.data_bytes()) buffer_.resize(replay.data_bytes());
    if (Kept* kept = keep_open_ ? files_.find(r.file) : nullptr) {
      Hdf5Replay::run(known.subspan(kept->layout, 1), kept->file, path, sample, Hdf5Replay::Part::read, scratch_,
                      buffer_.data());
      return bytes;
    }
    storage::File to_keep;  // moved into files_; a file read once reuses replay_file_'s memory
    storage::File& file = keep_open_ ? to_keep : replay_file_;
    const auto part = keep_open_ ? Hdf5Replay::Part::open_read : Hdf5Replay::Part::open_read_close;
    if (const auto layout = Hdf5Replay::run(known, file, path, sample, part, scratch_, buffer_.data())) {
      if (keep_open_) files_.insert(r.file, Kept{std::move(to_keep), *layout});
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
  const Hdf5Layout& l = layout_of(shape, samples_in_file);
  const std::uint64_t per_sample = l.sample_bytes_per_dataset();
  const std::size_t need = std::max<std::size_t>(per_sample, Hdf5ReplayShape{}.sieve_bytes);
  if (buffer_.size() < need) buffer_.resize(need);
  read_through_hdf5(r, l, t);
  return per_sample * static_cast<std::uint64_t>(l.datasets);
}

Hdf5Reader::~Hdf5Reader() {
  std::lock_guard lock(storage::hdf5_lock());
  open_.clear();  // H5Fclose under the lock
  fapl_ = h5::Id();
}

}  // namespace trainio::format
