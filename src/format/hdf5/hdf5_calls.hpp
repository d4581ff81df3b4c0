#pragma once
// The calls of a driver recording (storage/hdf5_vfd.hpp) as steps issued again without libhdf5:
// the one translation behind the read replay (hdf5_replay.hpp) and the write template
// (hdf5_write_template.hpp), and the calls both issue as libhdf5's sec2 driver does.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "storage/file.hpp"
#include "storage/hdf5_vfd.hpp"

namespace trainio::format {

struct Hdf5Step {
  // probe: H5Fcreate's open of a file that must not exist; path_stat: H5Fopen or H5Fcreate naming
  // the file; metadata: a metadata read (replay, its bytes compared) or write (template, the
  // recorded bytes); read: a read-back while writing; zeros: raw data that is zeros.
  enum class Kind : std::uint8_t { probe, open, create, lock, unlock, path_stat, read, metadata, data, zeros, truncate, close };
  Kind kind = Kind::metadata;
  bool exclusive = false;    // lock
  int dataset = 0;           // data, in a replay
  std::uint64_t offset = 0;  // read, metadata, data, zeros; truncate: the new size
  std::uint64_t size = 0;    // read, metadata, data, zeros
  // metadata: where its bytes start in the recording's metadata; data, in a template: the content offset
  std::uint64_t source = 0;
};

// What a translation accepts of a recording.
struct Hdf5Translation {
  bool writes = false;  // a new file written (probe, create, writes, truncate), else an existing one read
  // Whether H5Fopen/H5Fcreate names the file (path_stat) just before this read or write.
  std::function<bool(const storage::DriverCall&)> names_file_before;
  // A read or write as its step (kind, offset, size, dataset; `s.source` holds where a metadata
  // call's bytes start); false: the recording does not fit.
  std::function<bool(const storage::DriverCall&, Hdf5Step& s)> io;
};

// The steps of one file's recording; nullopt when a call does not fit (a second file, a write
// while reading, a read or write before the open, metadata bytes that do not add up) or the
// file was never named.
std::optional<std::vector<Hdf5Step>> translate_hdf5_calls(const storage::DriverRecording& r, const Hdf5Translation& t);

// The driver's read: pread until done; past the end of the file the rest reads as zeros.
void read_like_driver(storage::File& file, unsigned char* out, std::uint64_t size, std::uint64_t offset);

// Issues a lock, unlock, path_stat or close step as the driver and libhdf5 do; false for others.
bool issue_file_step(const Hdf5Step& s, storage::File& file, const std::string& path);

}  // namespace trainio::format
