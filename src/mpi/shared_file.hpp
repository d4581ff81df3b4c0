#pragma once
// Writing one file together: every rank of the job writes its own byte range of a new file
// with collective MPI-IO (MPI_File_write_at_all), as DLIO's generator does when there are fewer
// files than ranks. Also the MPI side of parallel HDF5.

#include <cstdint>
#include <string>

#include "mpi/comm.hpp"

namespace trainio::mpi {

class SharedFile {
 public:
  // Collective: creates `path` (it must not exist) on every rank of `comm`.
  static SharedFile create(const Comm& comm, const std::string& path);
  ~SharedFile();
  SharedFile(SharedFile&& o) noexcept;
  SharedFile(const SharedFile&) = delete;
  SharedFile& operator=(const SharedFile&) = delete;

  // Collective: each rank writes `size` bytes (possibly 0) at `offset`. Every rank must call it
  // the same number of times; large writes are split into the same number of rounds everywhere.
  void write_at_all(std::uint64_t offset, const void* data, std::uint64_t size);
  // Collective.
  void close();

 private:
  SharedFile() = default;
  const Comm* comm_ = nullptr;
  std::string path_;
  void* handle_ = nullptr;  // MPI_File, kept opaque so mpi.h stays out of this header's users
};

// A file-access property list for parallel HDF5 over MPI_COMM_WORLD (an HDF5 hid_t; the caller
// closes it). Kept as a plain integer so that hdf5.h stays out of this header's users.
std::int64_t hdf5_parallel_fapl();
// A transfer property list for collective HDF5 I/O (the caller closes it).
std::int64_t hdf5_collective_dxpl();

}  // namespace trainio::mpi
