#include "format/hdf5/hdf5_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "util/error.hpp"

namespace trainio::format {

namespace {

using storage::DriverCall;
using Kind = Hdf5Replay::Step::Kind;

// Bytes of a version-2 object header (signature "OHDR") that differ between files of one layout
// without changing what libhdf5 reads next: the access, modification, change and birth times
// (flag 0x20), and the checksum of the first chunk, which covers them. Ranges are absolute.
void ohdr_volatile_bytes(const unsigned char* p, std::uint64_t size, std::uint64_t offset,
                         std::vector<Hdf5Replay::Read>& out) {
  if (size < 7 || std::memcmp(p, "OHDR", 4) != 0 || p[4] != 2) return;
  const unsigned flags = p[5];
  std::uint64_t at = 6;
  if (flags & 0x20) {
    out.push_back({offset + at, 16});
    at += 16;
  }
  if (flags & 0x10) at += 4;  // attribute storage phase change values
  const unsigned width = 1u << (flags & 3);
  if (at + width > size) return;
  std::uint64_t chunk0 = 0;
  for (unsigned i = 0; i < width; ++i) chunk0 |= static_cast<std::uint64_t>(p[at + i]) << (8 * i);
  at += width;
  out.push_back({offset + at + chunk0, 4});  // the checksum after the chunk's messages (maybe in a later read)
}

}  // namespace

bool Hdf5Replay::agrees(const Step& s, const unsigned char* got) const {
  const unsigned char* want = metadata_.data() + s.source;
  std::uint64_t from = 0;  // compared up to here, relative to s.offset
  for (const Read& v : volatile_) {
    if (v.offset + v.size <= s.offset || v.offset >= s.offset + s.size) continue;
    const std::uint64_t begin = v.offset > s.offset ? v.offset - s.offset : 0;
    if (begin > from && std::memcmp(got + from, want + from, begin - from) != 0) return false;
    from = std::max(from, std::min(s.size, v.offset + v.size - s.offset));
  }
  return from >= s.size || std::memcmp(got + from, want + from, s.size - from) == 0;
}

std::optional<Hdf5Replay> Hdf5Replay::learn(const storage::DriverRecording& r, const Hdf5ReplayShape& shape,
                                            std::uint64_t sample, Model model) {
  if (shape.sample_bytes == 0 || shape.datasets < 0 || sample >= shape.samples) return std::nullopt;
  Hdf5Replay t;
  t.shape_ = shape;
  t.exact_ = model == Model::this_sample;
  t.file_size_ = r.file_size;
  int data_reads = 0;
  Hdf5Translation reading;
  // H5Fopen names the file once the superblock is read.
  reading.names_file_before = [](const DriverCall& c) { return c.type != H5FD_MEM_SUPER; };
  reading.io = [&](const DriverCall& c, Step& s) {
    s.offset = c.offset;
    if (c.type != H5FD_MEM_DRAW) {
      s.kind = Kind::metadata;
      s.size = c.size;
      return true;
    }
    s.kind = Kind::data;
    if (t.exact_) {
      s.dataset = data_reads++;
      s.size = c.size;
      t.data_bytes_ = std::max(t.data_bytes_, c.size);
      return true;
    }
    if (data_reads >= shape.datasets || c.offset < sample * shape.sample_bytes) return false;
    s.dataset = data_reads++;
    s.offset = c.offset - sample * shape.sample_bytes;
    return true;
  };
  auto steps = translate_hdf5_calls(r, reading);
  if (!steps) return std::nullopt;
  t.steps_ = std::move(*steps);
  t.metadata_.assign(r.metadata.begin(), r.metadata.end());
  // libhdf5 reads object headers speculatively (512 bytes), so a read can hold the start of
  // objects it never opens (the labels dataset): look for headers anywhere in each read.
  for (const Step& m : t.steps_) {
    if (m.kind != Kind::metadata) continue;
    const unsigned char* p = t.metadata_.data() + m.source;
    for (std::uint64_t at = 0; at + 4 <= m.size; ++at)
      if (p[at] == 'O' && std::memcmp(p + at, "OHDR", 4) == 0)
        ohdr_volatile_bytes(p + at, m.size - at, m.offset + at, t.volatile_);
  }
  std::sort(t.volatile_.begin(), t.volatile_.end(), [](const Read& a, const Read& b) { return a.offset < b.offset; });
  if (t.exact_) return t;
  if (data_reads != shape.datasets) return std::nullopt;
  t.data_bytes_ = std::max(shape.sample_bytes, std::min(shape.sieve_bytes, shape.samples * shape.sample_bytes));
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
    if (s.kind == Kind::data && s.dataset == dataset) return exact_ ? Read{s.offset, s.size} : data_read_at(s.offset, sample);
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

std::optional<std::size_t> Hdf5Replay::run(std::span<const Hdf5Replay> candidates, storage::File& file,
                                           const std::string& path, std::uint64_t sample, Part part,
                                           std::vector<unsigned char>& scratch, void* data) {
  const bool opening = part != Part::read;
  // Candidates still in agreement with the file: a bit each (the reader keeps at most a few).
  std::uint32_t live = candidates.size() >= 32 ? ~0u : (1u << candidates.size()) - 1;
  auto first_live = [&] { return static_cast<std::size_t>(std::countr_zero(live)); };
  if (live == 0) return std::nullopt;
  for (std::size_t j = 0; j < candidates[first_live()].steps_.size(); ++j) {
    const Hdf5Replay& t = candidates[first_live()];
    const Step& s = t.steps_[j];
    switch (s.kind) {
      case Kind::open: {
        if (!opening) break;
        file.reopen(path, {.access = storage::Access::read, .close_on_exec = false});  // as sec2
        const std::uint64_t size = file.stat().size;
        for (std::size_t c = 0; c < candidates.size() && c < 32; ++c)
          if (candidates[c].file_size_ != size) live &= ~(1u << c);
        if (live == 0) return std::nullopt;
        break;
      }
      case Kind::lock:
      case Kind::unlock:
      case Kind::path_stat:
        if (opening) issue_file_step(s, file, path);
        break;
      case Kind::metadata:
        if (!opening) break;
        if (scratch.size() < s.size) scratch.resize(s.size);
        read_like_driver(file, scratch.data(), s.size, s.offset);
        for (std::size_t c = 0; c < candidates.size() && c < 32; ++c) {
          if (!(live & (1u << c))) continue;
          const auto& steps = candidates[c].steps_;
          const bool same_call = j < steps.size() && steps[j].kind == Kind::metadata && steps[j].offset == s.offset &&
                                 steps[j].size == s.size;  // always, for recordings of one libhdf5
          const Step& other = same_call ? steps[j] : s;
          if (!same_call || !candidates[c].agrees(other, scratch.data()))
            live &= ~(1u << c);
        }
        if (live == 0) return std::nullopt;
        break;
      case Kind::data: {
        const Read r = t.exact_ ? Read{s.offset, s.size} : t.data_read_at(s.offset, sample);
        read_like_driver(file, static_cast<unsigned char*>(data), r.size, r.offset);
        break;
      }
      case Kind::close:
        if (part == Part::open_read_close) issue_file_step(s, file, path);
        break;
      default: break;  // steps of writing: not in a reading's recording
    }
  }
  return first_live();
}

}  // namespace trainio::format
