#pragma once
// What started this process, read from the environment the launcher leaves: mpirun's or srun's
// job size, and the Slurm job and step a run belongs to (for the results). Also the one launch
// that goes silently wrong: srun without an MPI plugin starts N tasks that each see a one-rank
// MPI world, so N separate benchmarks race on one results folder.

#include <functional>
#include <optional>
#include <string>

namespace trainio::mpi {

// Reads one environment variable (nullptr when unset); std::getenv unless a test passes its own.
using EnvLookup = std::function<const char*(const char*)>;

struct SlurmStep {
  std::string job_id;     // SLURM_JOB_ID
  std::string step_id;    // SLURM_STEP_ID; empty in a batch script outside srun
  std::string node_list;  // SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST (compressed: "n[01-04]")
  int tasks = 0;          // SLURM_STEP_NUM_TASKS, else SLURM_NTASKS; 0 when Slurm gives neither
  int task = -1;          // SLURM_PROCID: this process's task in the step; -1 outside srun
};

struct Launcher {
  // "mpirun" (Open MPI's launcher), "srun" (Slurm with a PMIx plugin), "mpiexec" (a PMI launcher
  // such as MPICH's Hydra) or "none".
  std::string name = "none";
  int world_size = 0;              // ranks the launcher started, 0 without a launcher
  std::optional<SlurmStep> slurm;  // inside a Slurm allocation
};

Launcher detect_launcher(const EnvLookup& env = {});

// True when this process was started by an MPI launcher (mpirun, mpiexec, srun --mpi=pmix), so
// commands that do no I/O can skip MPI_Init yet still know the job size.
bool launched_by_mpi();

// Job size from the launcher's environment, 0 when not under a launcher.
int launcher_world_size();

// A usage error when Slurm started this process as one of several tasks of a step that no MPI
// plugin wired together (srun without --mpi=pmix), naming the launch that works.
void check_not_srun_without_mpi(const Launcher& launcher);

}  // namespace trainio::mpi
