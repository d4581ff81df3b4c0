#pragma once
// The collective means a format writer needs when every rank writes part of one file (fewer
// files than ranks), over the job's communicator: MPI-IO files and parallel HDF5's property
// lists. Format describes the bytes and the calls; the communicator stays here.

#include "format/format.hpp"
#include "mpi/comm.hpp"

namespace trainio::engine {

class MpiSharedWriting final : public format::SharedWriting {
 public:
  explicit MpiSharedWriting(const mpi::Comm& comm) : comm_(comm) {}
  int rank() const override { return comm_.rank(); }
  int ranks() const override { return comm_.size(); }
  std::unique_ptr<format::SharedOutput> create(const std::string& path) override;
  std::int64_t hdf5_file_access() override;
  std::int64_t hdf5_collective_transfer() override;

 private:
  const mpi::Comm& comm_;
};

}  // namespace trainio::engine
