#pragma once
// An HDF5 virtual file driver that moves bytes through storage::File: the same calls HDF5's
// default "sec2" driver makes (open + fstat, pread/pwrite loops, flock, ftruncate to the end of
// the allocated space), but checked, timed and counted like every other trainio storage call.
// It advertises sec2's features, so the library above (metadata accumulator, sieve buffer,
// chunk cache) behaves exactly as it does for h5py.

#include <hdf5.h>

#include <mutex>
#include <optional>

#include "util/error.hpp"

namespace trainio::storage {

// A file-access property list using the trainio driver (the caller closes it), with the library
// defaults h5py uses otherwise.
hid_t trainio_fapl();

// Debian's parallel HDF5 is not built thread-safe: every HDF5 call must hold this lock.
std::mutex& hdf5_lock();

// The storage error a driver callback met (HDF5 only sees "-1"), taken once.
std::optional<Error> take_driver_error();

}  // namespace trainio::storage
