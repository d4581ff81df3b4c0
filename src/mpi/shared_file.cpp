#include "mpi/shared_file.hpp"

#include <fmt/format.h>
#include <hdf5.h>
#include <mpi.h>

#include <algorithm>

#include "util/error.hpp"

namespace trainio::mpi {

namespace {

MPI_File* file_of(void* handle) { return static_cast<MPI_File*>(handle); }

Error mpi_io_failed(const char* call, const std::string& path, int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  int cls = 0;
  MPI_Error_class(rc, &cls);
  std::string hint;
  if (cls == MPI_ERR_NO_SPACE || cls == MPI_ERR_QUOTA) hint = "the file system is full: free space or choose another folder";
  else if (cls == MPI_ERR_ACCESS || cls == MPI_ERR_READ_ONLY) hint = "check the permissions of the folder";
  return io_error(fmt::format("{}('{}') failed: {}", call, path, std::string(text, static_cast<size_t>(len))), hint);
}

constexpr std::uint64_t kRound = 1ull << 30;  // MPI counts are ints: at most 1 GiB per call

}  // namespace

SharedFile SharedFile::create(const Comm& comm, const std::string& path) {
  SharedFile f;
  f.comm_ = &comm;
  f.path_ = path;
  auto* handle = new MPI_File(MPI_FILE_NULL);
  const int rc = MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL,
                               MPI_INFO_NULL, handle);
  if (rc != MPI_SUCCESS) {
    delete handle;
    throw mpi_io_failed("MPI_File_open", path, rc);
  }
  MPI_File_set_errhandler(*handle, MPI_ERRORS_RETURN);
  f.handle_ = handle;
  return f;
}

SharedFile::SharedFile(SharedFile&& o) noexcept : comm_(o.comm_), path_(std::move(o.path_)), handle_(o.handle_) {
  o.handle_ = nullptr;
}

SharedFile::~SharedFile() {
  if (!handle_) return;
  MPI_File_close(file_of(handle_));  // collective; reached only when every rank unwinds here
  delete file_of(handle_);
}

void SharedFile::write_at_all(std::uint64_t offset, const void* data, std::uint64_t size) {
  const std::uint64_t rounds = comm_->max((size + kRound - 1) / kRound);
  const auto* p = static_cast<const char*>(data);
  // A rank whose write fails keeps joining the remaining rounds (with nothing to write), so that
  // no rank is left inside a collective call; it reports the failure after the last round.
  int failure = MPI_SUCCESS;
  for (std::uint64_t r = 0; r < rounds; ++r) {
    const std::uint64_t done = std::min(size, r * kRound);
    const std::uint64_t n = failure == MPI_SUCCESS ? std::min(kRound, size - done) : 0;
    MPI_Status status;
    const int rc = MPI_File_write_at_all(*file_of(handle_), static_cast<MPI_Offset>(offset + done), p + done,
                                         static_cast<int>(n), MPI_BYTE, &status);
    if (rc != MPI_SUCCESS && failure == MPI_SUCCESS) failure = rc;
  }
  if (failure != MPI_SUCCESS) throw mpi_io_failed("MPI_File_write_at_all", path_, failure);
}

void SharedFile::close() {
  if (!handle_) return;
  const int rc = MPI_File_close(file_of(handle_));
  delete file_of(handle_);
  handle_ = nullptr;
  if (rc != MPI_SUCCESS) throw mpi_io_failed("MPI_File_close", path_, rc);
}

std::int64_t hdf5_parallel_fapl() {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0 || H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) < 0)
    throw internal_error("HDF5 refused the MPI-IO driver");
  return fapl;
}

std::int64_t hdf5_collective_dxpl() {
  const hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  if (dxpl < 0 || H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0)
    throw internal_error("HDF5 refused collective transfers");
  return dxpl;
}

}  // namespace trainio::mpi
