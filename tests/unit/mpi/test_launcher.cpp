#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "mpi/launcher.hpp"
#include "util/error.hpp"

using namespace trainio;

namespace {

// A launcher's environment, as the variables srun, sbatch and mpirun leave.
mpi::Launcher launched_with(const std::map<std::string, std::string>& vars) {
  return mpi::detect_launcher([&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

const std::map<std::string, std::string> kSrunTask = {
    {"SLURM_JOB_ID", "4242"},          {"SLURM_STEP_ID", "0"},  {"SLURM_PROCID", "2"},
    {"SLURM_STEP_NUM_TASKS", "4"},     {"SLURM_NTASKS", "8"},   {"SLURM_STEP_NODELIST", "n[01-02]"},
    {"SLURM_JOB_NODELIST", "n[01-04]"}};

std::map<std::string, std::string> with(std::map<std::string, std::string> vars,
                                        const std::map<std::string, std::string>& more) {
  for (const auto& [k, v] : more) vars[k] = v;
  return vars;
}

}  // namespace

TEST_CASE("no launcher: no world, no Slurm, nothing to refuse", "[launcher]") {
  const mpi::Launcher l = launched_with({});
  CHECK(l.name == "none");
  CHECK(l.world_size == 0);
  CHECK_FALSE(l.slurm);
  CHECK_NOTHROW(mpi::check_not_srun_without_mpi(l));
}

TEST_CASE("mpirun: the world from Open MPI, not the Slurm step that started its daemons", "[launcher]") {
  const mpi::Launcher l = launched_with(with(kSrunTask, {{"OMPI_COMM_WORLD_SIZE", "16"}, {"PMIX_RANK", "3"}}));
  CHECK(l.name == "mpirun");
  CHECK(l.world_size == 16);
  REQUIRE(l.slurm);
  CHECK(l.slurm->job_id == "4242");
  CHECK(l.slurm->task == -1);
  CHECK_NOTHROW(mpi::check_not_srun_without_mpi(l));
}

TEST_CASE("srun --mpi=pmix: the step's tasks are the world, and the step is recorded", "[launcher]") {
  const mpi::Launcher l = launched_with(with(kSrunTask, {{"PMIX_RANK", "2"}}));
  CHECK(l.name == "srun");
  CHECK(l.world_size == 4);  // the step's tasks, not the allocation's
  REQUIRE(l.slurm);
  CHECK(l.slurm->step_id == "0");
  CHECK(l.slurm->node_list == "n[01-02]");
  CHECK(l.slurm->tasks == 4);
  CHECK(l.slurm->task == 2);
  CHECK_NOTHROW(mpi::check_not_srun_without_mpi(l));
  CHECK(launched_with(with(kSrunTask, {{"PMIX_RANK", "2"}, {"PMIX_SIZE", "4"}})).world_size == 4);
}

TEST_CASE("srun without an MPI plugin is refused with the launch that works", "[launcher]") {
  const mpi::Launcher l = launched_with(kSrunTask);
  CHECK(l.name == "none");
  CHECK(l.world_size == 0);
  try {
    mpi::check_not_srun_without_mpi(l);
    FAIL("a step of 4 tasks that MPI sees as 4 one-rank worlds was accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    const std::string text = format_error(e);
    CHECK_THAT(text, Catch::Contains("srun started 4 tasks"));
    CHECK_THAT(text, Catch::Contains("srun --mpi=pmix -n 4"));
  }
}

TEST_CASE("one-task steps and batch scripts run as one rank", "[launcher]") {
  // srun -n 1 without a plugin: one rank either way.
  CHECK_NOTHROW(mpi::check_not_srun_without_mpi(launched_with(with(kSrunTask, {{"SLURM_STEP_NUM_TASKS", "1"}}))));
  // A batch script of an 8-task job: SLURM_PROCID=0 and SLURM_NTASKS=8, but no step.
  const mpi::Launcher batch = launched_with(
      {{"SLURM_JOB_ID", "4242"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_JOB_NODELIST", "n[01-04]"}});
  REQUIRE(batch.slurm);
  CHECK(batch.slurm->step_id.empty());
  CHECK(batch.slurm->node_list == "n[01-04]");
  CHECK(batch.slurm->tasks == 8);
  CHECK_NOTHROW(mpi::check_not_srun_without_mpi(batch));
}
