#pragma once
// One trainio run of a campaign (a sweep point's repeat, a probe of the accelerator search):
// launched as a child job with the launcher template, into its own results folder, its console
// output kept in a log beside the folder. A folder that already holds a summary is a finished
// job and is kept; a folder left by a failed attempt is moved aside, never deleted.

#include <optional>
#include <string>
#include <vector>

#include "report/run_results.hpp"

namespace trainio::campaign {

// `srun --mpi=pmix -n {ranks}` inside a Slurm allocation, else `mpirun -np {ranks}`.
std::string default_launcher();

// The launcher template split into words, with {ranks} filled in. A template without {ranks}
// is a usage error: every job would run with the same ranks whatever the campaign asks.
std::vector<std::string> launcher_words(const std::string& launcher, int ranks);

struct Job {
  int ranks = 1;
  std::vector<std::string> run_words;  // workload and overrides for `trainio run`
  std::string folder;                  // the run's results folder
};

struct JobOutcome {
  bool kept = false;     // finished before this campaign started (resumed)
  int exit_code = 0;     // of the launched job; 0 when kept
  std::string log;       // the job's console output
  std::optional<report::RunResult> result;  // its summary, when it finished
};

// A campaign's folder belongs to one command, workload and set of shared overrides, recorded in
// DIR/campaign.json by the first campaign into it. A later one with others is refused (a usage
// error), so that the runs a rerun keeps are never taken for runs of other settings.
void claim_folder(const std::string& folder, const std::string& command, const std::vector<std::string>& words);

// Runs the job unless its folder already holds a readable summary.json.
JobOutcome run_job(const Job& job, const std::string& launcher);

}  // namespace trainio::campaign
