#pragma once
// Where and how a run happened, for the results: hosts, ranks, software versions, storage.

#include <optional>
#include <string>
#include <vector>

#include "config/workload.hpp"
#include "metrics/summary.hpp"
#include "mpi/comm.hpp"
#include "mpi/launcher.hpp"
#include "plan/layout.hpp"
#include "util/host_info.hpp"

namespace trainio::report {

// MLPerf's failover: this run reads what an earlier job wrote (--resume-from).
struct Failover {
  std::string previous_results;  // as given
  std::string previous_end;      // that job's end, its summary.json's "end" (wall time ISO 8601)
  int previous_ranks = 0;        // its ranks (num_accelerators; 0: not given): the save's layout
};

// MLPerf Storage's checkpointing rule: the read phase, run as a job of its own, starts within this
// many seconds of the write phase's end.
inline constexpr double kFailoverLimitSeconds = 30;

// Seconds from the earlier job's end to this run's first rank's process start (wall clocks, to the
// microsecond): the failover gap. nullopt when a rank's process start is unknown.
std::optional<double> failover_gap(const Failover& f, const metrics::StartupSummary& startup);

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
  std::optional<Failover> failover;
};

// The run's hosts by host index, the ranks on each and each rank's cores. Collective, gathered
// once before the run: rank 0 gets them all, the other ranks their own host only.
struct RunHosts {
  std::vector<util::HostInfo> hosts;
  std::vector<int> ranks_per_host;
  std::vector<int> cores_per_rank;
  std::vector<std::string> hostnames() const;  // by host index
};
RunHosts gather_hosts(const mpi::Comm& comm);

// The context of a run on `hosts` (the full context on rank 0, as gather_hosts leaves it).
RunContext context_of(const plan::DatasetLayout& layout, const mpi::Comm& comm, bool mpi_initialized,
                          const std::string& command_line, const std::string& output_dir, RunHosts hosts);

}  // namespace trainio::report
