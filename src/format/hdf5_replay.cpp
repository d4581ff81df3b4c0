#include "format/hdf5_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace trainio::format {

namespace {

using storage::DriverCall;
using Kind = Hdf5Replay::Step::Kind;

// The driver's read: pread until done; past the end of the file the rest reads as zeros.
void read_like_driver(storage::File& file, unsigned char* out, std::uint64_t size, std::uint64_t offset) {
  while (size > 0) {
    const std::size_t n = file.pread_some(out, size, offset);
    if (n == 0) {
      std::memset(out, 0, size);
      return;
    }
    out += n;
    offset += n;
    size -= n;
  }
}

}  // namespace

std::optional<Hdf5Replay> Hdf5Replay::learn(const storage::DriverRecording& r, const Hdf5ReplayShape& shape,
                                            std::uint64_t sample) {
  if (shape.sample_bytes == 0 || shape.datasets < 1 || sample >= shape.samples) return std::nullopt;
  Hdf5Replay t;
  t.shape_ = shape;
  t.file_size_ = r.file_size;
  bool opened = false, stat_placed = false;
  int data_reads = 0;
  std::size_t metadata_at = 0;
  for (const DriverCall& c : r.calls) {
    Step s;
    switch (c.kind) {
      case DriverCall::Kind::open:
        if (opened) return std::nullopt;  // one file per recording
        opened = true;
        s.kind = Kind::open;
        break;
      case DriverCall::Kind::lock:
        s.kind = Kind::lock;
        s.exclusive = c.exclusive;
        break;
      case DriverCall::Kind::unlock: s.kind = Kind::unlock; break;
      case DriverCall::Kind::close: s.kind = Kind::close; break;
      case DriverCall::Kind::read:
        if (c.type != H5FD_MEM_SUPER && !stat_placed) {  // H5Fopen names the file once the superblock is read
          if (!opened) return std::nullopt;
          Step stat;
          stat.kind = Kind::path_stat;
          t.steps_.push_back(stat);
          stat_placed = true;
        }
        if (c.type == H5FD_MEM_DRAW) {
          if (data_reads >= shape.datasets || c.offset < sample * shape.sample_bytes) return std::nullopt;
          s.kind = Kind::data;
          s.dataset = data_reads++;
          s.offset = c.offset - sample * shape.sample_bytes;
        } else {
          s.kind = Kind::metadata;
          s.offset = c.offset;
          s.size = c.size;
          s.metadata_at = metadata_at;
          metadata_at += c.size;
        }
        break;
    }
    t.steps_.push_back(s);
  }
  if (!opened || data_reads != shape.datasets || metadata_at != r.metadata.size()) return std::nullopt;
  t.metadata_.assign(r.metadata.begin(), r.metadata.end());
  // The model must reproduce what libhdf5 read for the recorded sample.
  std::size_t i = 0;
  for (const DriverCall& c : r.calls) {
    if (c.kind != DriverCall::Kind::read || c.type != H5FD_MEM_DRAW) continue;
    if (t.data_read(static_cast<int>(i++), sample) != Read{c.offset, c.size}) return std::nullopt;
  }
  return t;
}

Hdf5Replay::Read Hdf5Replay::data_read(int dataset, std::uint64_t sample) const {
  for (const Step& s : steps_)
    if (s.kind == Kind::data && s.dataset == dataset) return data_read_at(s.offset, sample);
  throw internal_error(fmt::format("HDF5 replay: no dataset {}", dataset));
}

Hdf5Replay::Read Hdf5Replay::data_read_at(std::uint64_t base, std::uint64_t sample) const {
  const std::uint64_t offset = base + sample * shape_.sample_bytes;
  const std::uint64_t s = shape_.sample_bytes;
  if (s > shape_.sieve_bytes) return {offset, s};  // larger than the sieve buffer: read directly
  // One sieve fill from the sample on, bounded by the dataset's end and the file's.
  std::uint64_t size = std::min(shape_.sieve_bytes, (shape_.samples - std::min(sample, shape_.samples)) * s);
  size = std::min(size, file_size_ > offset ? file_size_ - offset : 0);
  return {offset, size};
}

Hdf5Replay::Outcome Hdf5Replay::run(storage::File& file, const std::string& path, std::uint64_t sample, Part part,
                                    std::vector<unsigned char>& scratch, void* data) const {
  const bool opening = part != Part::read;
  for (const Step& s : steps_) {
    switch (s.kind) {
      case Kind::open:
        if (!opening) break;
        file = storage::File::open(path, {.access = storage::Access::read, .close_on_exec = false});  // as sec2
        if (file.stat().size != file_size_) return Outcome::mismatch;
        break;
      case Kind::lock:
        if (opening && !file.try_lock(s.exclusive))
          throw io_error("'" + path + "' is locked by another process (HDF5 file locking)",
                         "close the other program, or set HDF5_USE_FILE_LOCKING=FALSE");
        break;
      case Kind::unlock:
        if (opening) file.unlock();
        break;
      case Kind::path_stat:
        if (opening) storage::stat_link_as_hdf5(path);
        break;
      case Kind::metadata:
        if (!opening) break;
        if (scratch.size() < s.size) scratch.resize(s.size);
        read_like_driver(file, scratch.data(), s.size, s.offset);
        if (std::memcmp(scratch.data(), metadata_.data() + s.metadata_at, s.size) != 0) return Outcome::mismatch;
        break;
      case Kind::data: {
        const Read r = data_read_at(s.offset, sample);
        read_like_driver(file, static_cast<unsigned char*>(data), r.size, r.offset);
        break;
      }
      case Kind::close:
        if (part == Part::open_read_close) file.close();
        break;
    }
  }
  return Outcome::done;
}

}  // namespace trainio::format
