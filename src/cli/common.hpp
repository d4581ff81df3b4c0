#pragma once
// Pieces every subcommand shares: MPI start-up when launched by mpirun/srun, logging, loading the
// workload on all ranks together, and turning errors into one message and an exit code.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/workload.hpp"
#include "mpi/comm.hpp"

namespace trainio::cli {

struct CommonOptions {
  std::string log_level;  // empty: TRAINIO_LOG or the default
};

// MPI for the lifetime of a command: a real MPI job under a launcher, a solo rank otherwise.
class Job {
 public:
  Job(int* argc, char*** argv, bool use_mpi);
  const mpi::Comm& comm() const { return comm_; }

 private:
  std::unique_ptr<mpi::Session> session_;
  mpi::Comm comm_;
};

// Rank 0 logs at info, other ranks at warning; --log-level or TRAINIO_LOG change it.
void setup_logging(const mpi::Comm& comm, const std::string& level_option);
// Also writes the log to `path` (rank 0).
void add_log_file(const std::string& path);

// Loads the workload on every rank; a failure on any rank stops all of them.
config::Workload load_workload(const std::vector<std::string>& words, const mpi::Comm& comm);
// Logs the loader's notes (keys without effect, old spellings) on rank 0.
void log_notes(const config::Workload& w, const mpi::Comm& comm);

// Prints a result (an epoch's line, the final table) to standard output and into the run's log
// file, so the log the results folder keeps holds what the console showed.
void print_result(const std::string& text);
// Prints an error's text to standard error and into the run's log file.
void print_error(const std::string& text);

// Runs a command body, turning any error into its message (printed once) and an exit code.
// `job` is consulted when an error arrives (it may not exist yet).
int guarded(const std::function<int()>& body, const std::unique_ptr<Job>& job);
// The same for a command that runs in one process (no MPI job).
int guarded(const std::function<int()>& body);

// A command on every rank of the job: starts MPI when launched by mpirun/srun, sets up logging,
// loads the workload named by `words` on every rank and logs its notes, then runs `body`;
// errors become their message and an exit code, as `guarded`.
int run_workload_command(int& argc, char**& argv, const std::string& log_level, const std::vector<std::string>& words,
                         const std::function<int(const mpi::Comm&, const config::Workload&)>& body);

// A storage bandwidth as given on the command line ("10GiB/s", "1.5 GB/s", "800MiB"): bytes per
// second; a usage error naming --storage-bandwidth otherwise.
double parse_bandwidth(const std::string& text);

// The command line as typed, for the results.
std::string command_line(int argc, char** argv);

}  // namespace trainio::cli
