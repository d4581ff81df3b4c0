#include "campaign/job.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "storage/fs.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"
#include "util/redact.hpp"

extern char** environ;

namespace trainio::campaign {

namespace {

namespace fs = std::filesystem;

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw io_error(fmt::format("cannot find the trainio binary (/proc/self/exe): {}", ec.message()));
  return p.string();
}

// The job's summary, when its folder holds one that reads.
std::optional<report::RunResult> finished_run(const std::string& folder) {
  if (!fs::exists(fs::path(folder) / "summary.json")) return std::nullopt;
  try {
    auto runs = report::load_runs(folder);
    if (runs.size() == 1) return std::move(runs.front());
  } catch (const Error&) {
  }
  return std::nullopt;
}

// Moves a failed attempt's folder and log aside (<folder>.failed-N), so that a rerun starts clean
// and nothing an earlier attempt wrote is lost.
void move_aside(const std::string& folder, const std::string& log) {
  if (!fs::exists(folder) && !fs::exists(log)) return;
  int n = 1;
  while (fs::exists(fmt::format("{}.failed-{}", folder, n)) || fs::exists(fmt::format("{}.failed-{}.log", folder, n))) ++n;
  if (fs::exists(folder)) storage::rename_path(folder, fmt::format("{}.failed-{}", folder, n));
  if (fs::exists(log)) storage::rename_path(log, fmt::format("{}.failed-{}.log", folder, n));
}

// Starts `argv` with standard output and error into `log`; returns its exit code (128 + signal
// when a signal ended it).
int spawn_and_wait(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw usage_error(fmt::format("cannot start '{}': {}", argv[0], std::strerror(rc)),
                      "check --launcher: its first word must be a program on PATH (mpirun, srun, ...)");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw io_error(fmt::format("waiting for '{}' failed: {}", argv[0], std::strerror(errno)));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

}  // namespace

void claim_folder(const std::string& folder, const std::string& command, const std::vector<std::string>& words) {
  const std::string path = util::join(folder, "campaign.json");
  // Kept and compared under the one rule for secrets: a secret is not what tells campaigns apart.
  std::vector<std::string> shown;
  for (const auto& w : words) shown.push_back(util::redact(w));
  const nlohmann::json mine = {{"command", command}, {"words", shown}};
  const auto text = storage::read_small_file(path);
  if (!text) {
    storage::make_dirs(folder);
    storage::write_file_atomic(path, mine.dump(2) + "\n");
    return;
  }
  nlohmann::json earlier;
  try {
    earlier = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception&) {
  }
  if (!earlier.is_object() || !earlier.contains("command") || !earlier.contains("words"))
    throw usage_error(fmt::format("'{}' is not a campaign's record", path), "give this campaign another --output");
  if (earlier != mine)
    throw usage_error(fmt::format("'{}' holds the runs of trainio {} {}; this is trainio {} {}", folder,
                                  earlier.value("command", std::string("?")), earlier.value("words", nlohmann::json()).dump(),
                                  command, mine["words"].dump()),
                      "rerun it with the same workload and overrides to resume it, or give this campaign another --output");
}

std::string default_launcher() {
  return std::getenv("SLURM_JOB_ID") ? "srun --mpi=pmix -n {ranks}" : "mpirun -np {ranks}";
}

std::vector<std::string> launcher_words(const std::string& launcher, int ranks) {
  if (launcher.find("{ranks}") == std::string::npos)
    throw usage_error(fmt::format("--launcher '{}' has no {{ranks}}", launcher),
                      "write where the rank count goes, e.g. --launcher 'mpirun -np {ranks} --bind-to none'");
  std::vector<std::string> words;
  std::istringstream in(launcher);
  for (std::string w; in >> w;) {
    for (std::size_t at; (at = w.find("{ranks}")) != std::string::npos;) w.replace(at, 7, std::to_string(ranks));
    words.push_back(w);
  }
  return words;
}

JobOutcome run_job(const Job& job, const std::string& launcher) {
  JobOutcome out;
  out.log = job.folder + ".log";
  if (auto done = finished_run(job.folder)) {
    out.kept = true;
    out.result = std::move(done);
    return out;
  }
  move_aside(job.folder, out.log);
  storage::make_dirs(util::parent_of(job.folder));
  std::vector<std::string> argv = launcher_words(launcher, job.ranks);
  argv.push_back(self_executable());
  argv.push_back("run");
  argv.insert(argv.end(), job.run_words.begin(), job.run_words.end());
  for (const char* w : {"--no-progress", "--output"}) argv.push_back(w);
  argv.push_back(job.folder);
  out.exit_code = spawn_and_wait(argv, out.log);
  if (out.exit_code == 0) out.result = finished_run(job.folder);
  return out;
}

}  // namespace trainio::campaign
