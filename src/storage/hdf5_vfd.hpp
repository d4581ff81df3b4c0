#pragma once
// An HDF5 virtual file driver that moves bytes through storage::File: the same calls HDF5's
// default "sec2" driver makes (open + fstat, pread/pwrite loops, flock, ftruncate to the end of
// the allocated space), but checked, timed and counted like every other trainio storage call.
// It advertises sec2's features, so the library above (metadata accumulator, sieve buffer,
// chunk cache) behaves exactly as it does for h5py.

#include <hdf5.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "storage/file.hpp"
#include "util/error.hpp"

namespace trainio::storage {

// A file-access property list using the trainio driver (the caller closes it), with the library
// defaults h5py uses otherwise.
hid_t trainio_fapl();

// Debian's parallel HDF5 is not built thread-safe: every HDF5 call must hold this lock. Storage
// calls replayed without libhdf5 (format/hdf5/hdf5_replay.hpp) do not need it.
std::mutex& hdf5_lock();

// One storage call the driver made for libhdf5 (open includes its fstat).
struct DriverCall {
  // open_missing: an open without O_CREAT of a file that does not exist (H5Fcreate probes so).
  enum class Kind : std::uint8_t { open, open_missing, lock, unlock, read, write, truncate, close };
  Kind kind = Kind::read;
  H5FD_mem_t type = H5FD_MEM_DEFAULT;  // of a read or write: superblock, object header, raw data, ...
  bool exclusive = false;              // of a lock
  bool create = false;                 // of an open: O_CREAT | O_EXCL
  std::uint64_t offset = 0, size = 0;  // of a read or write; of a truncate, the new size (offset)
};

// What the driver did on one thread while recording: the calls in order, the bytes of every
// metadata read and write (everything but raw data), and the file's size at open.
struct DriverRecording {
  std::vector<DriverCall> calls;
  std::vector<unsigned char> metadata;
  std::uint64_t file_size = 0;
  // With keep_file the driver hands its descriptor over at H5Fclose instead of closing it (the
  // caller keeps the file open, as h5py keeps a File object).
  bool keep_file = false;
  File kept;
};

// While `r` is set the driver appends the calls it makes on this thread to it; nullptr stops.
void record_driver_calls(DriverRecording* r);

// flock(2) without waiting, as libhdf5 locks a file it opens; a lock another process holds is an
// error naming the file and the way around it.
void lock_as_hdf5(File& file, bool exclusive);

// What H5Fopen and H5Fcreate do outside the driver to name the file: getcwd(2) when the path is
// relative (H5_build_extpath, a 1 KiB buffer), then lstat(2) of the path (symbolic links are
// resolved); the lstat is checked and observed as a stat.
void name_file_as_hdf5(const std::string& path);

// The storage error a driver callback met (HDF5 only sees "-1"), taken once.
std::optional<Error> take_driver_error();

}  // namespace trainio::storage
