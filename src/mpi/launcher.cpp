#include "mpi/launcher.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "util/error.hpp"

namespace trainio::mpi {

namespace {

int to_int(const char* v) { return v ? std::atoi(v) : 0; }

std::string to_string(const char* v) { return v ? v : ""; }

}  // namespace

Launcher detect_launcher(const EnvLookup& lookup) {
  const auto env = [&](const char* name) -> const char* { return lookup ? lookup(name) : std::getenv(name); };
  Launcher l;
  if (env("SLURM_JOB_ID")) {
    SlurmStep s;
    s.job_id = to_string(env("SLURM_JOB_ID"));
    s.step_id = to_string(env("SLURM_STEP_ID"));
    s.node_list = to_string(env("SLURM_STEP_NODELIST") ? env("SLURM_STEP_NODELIST") : env("SLURM_JOB_NODELIST"));
    s.tasks = to_int(env("SLURM_STEP_NUM_TASKS") ? env("SLURM_STEP_NUM_TASKS") : env("SLURM_NTASKS"));
    // A batch script has SLURM_PROCID=0 too, but no step id: only srun's tasks have both.
    if (env("SLURM_PROCID") && env("SLURM_STEP_ID")) s.task = to_int(env("SLURM_PROCID"));
    l.slurm = s;
  }
  if (const int n = to_int(env("OMPI_COMM_WORLD_SIZE")); n > 0) {
    // mpirun's ranks inherit the Slurm variables of the step that started mpirun's daemons,
    // which say nothing about the ranks.
    l.name = "mpirun";
    l.world_size = n;
    if (l.slurm) l.slurm->task = -1;
  } else if (l.slurm && l.slurm->task >= 0 && env("PMIX_RANK")) {
    // srun with a PMIx plugin; Slurm's PMIx server may leave PMIX_SIZE unset.
    l.name = "srun";
    l.world_size = to_int(env("PMIX_SIZE")) > 0 ? to_int(env("PMIX_SIZE")) : l.slurm->tasks;
  } else {
    for (const char* name : {"PMIX_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
      if (const int n = to_int(env(name)); n > 0) {
        l.name = "mpiexec";
        l.world_size = n;
        break;
      }
    }
  }
  return l;
}

bool launched_by_mpi() { return launcher_world_size() > 0; }

int launcher_world_size() { return detect_launcher().world_size; }

void check_not_srun_without_mpi(const Launcher& l) {
  if (l.world_size > 0 || !l.slurm || l.slurm->task < 0 || l.slurm->tasks <= 1) return;
  throw usage_error(
      fmt::format("srun started {} tasks, but no MPI plugin joined them (this is task {}), so each would run as its own "
                  "one-rank benchmark and they would overwrite each other's results",
                  l.slurm->tasks, l.slurm->task),
      fmt::format("launch with 'srun --mpi=pmix -n {} trainio ...', or set MpiDefault=pmix in slurm.conf "
                  "('srun --mpi=list' shows the plugins)",
                  l.slurm->tasks));
}

}  // namespace trainio::mpi
