#pragma once
// Where and how a run happened, for the results: hosts, ranks, software versions, storage.

#include <string>
#include <vector>

#include "config/workload.hpp"
#include "mpi/comm.hpp"
#include "mpi/launcher.hpp"
#include "plan/layout.hpp"
#include "util/host_info.hpp"

namespace trainio::report {

struct RunContext {
  std::vector<util::HostInfo> hosts;  // one per host, in host order
  std::vector<int> ranks_per_host;
  std::vector<int> cores_per_rank;  // CPUs each rank may run on (its affinity)
  int ranks = 1;
  std::string mpi_library;
  mpi::Launcher launcher;  // what started the ranks, and the Slurm job and step
  std::string data_folder;
  std::string data_fs_type;
  std::string command_line;
  std::string output_dir;
};

// Collective; the full context is on rank 0 (other ranks get their own host only).
RunContext gather_context(const plan::DatasetLayout& layout, const mpi::Comm& comm, bool mpi_initialized,
                          const std::string& command_line, const std::string& output_dir);

}  // namespace trainio::report
