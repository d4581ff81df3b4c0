#include "cli/common.hpp"

#include <fmt/format.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "config/load.hpp"
#include "config/schema.hpp"
#include "engine/together.hpp"
#include "mpi/launcher.hpp"
#include "util/error.hpp"
#include "util/redact.hpp"
#include "util/units.hpp"

namespace trainio::cli {

Job::Job(int* argc, char*** argv, bool use_mpi) : comm_(mpi::Comm::solo()) {
  // Caught before anything is written: N one-rank runs would race on one results folder.
  mpi::check_not_srun_without_mpi(mpi::detect_launcher());
  if (!use_mpi) return;
  session_ = std::make_unique<mpi::Session>(argc, argv);
  comm_ = mpi::Comm::world();
}

namespace {

// Every log line under the one rule for secrets (util/redact.hpp), whoever logged it.
class RedactingSink final : public spdlog::sinks::sink {
 public:
  explicit RedactingSink(std::shared_ptr<spdlog::sinks::sink> inner) : inner_(std::move(inner)) {}
  void log(const spdlog::details::log_msg& msg) override {
    const std::string_view payload(msg.payload.data(), msg.payload.size());
    if (payload.find('=') == std::string_view::npos && payload.find("://") == std::string_view::npos)
      return inner_->log(msg);
    const std::string text = util::redact(payload);
    spdlog::details::log_msg copy(msg);
    copy.payload = text;
    inner_->log(copy);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override { inner_->set_formatter(std::move(formatter)); }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

}  // namespace

void setup_logging(const mpi::Comm& comm, const std::string& level_option) {
  auto logger = std::make_shared<spdlog::logger>(
      "trainio", std::make_shared<RedactingSink>(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  const std::string who = comm.size() > 1 && !comm.is_root() ? fmt::format("trainio[rank {}]", comm.rank()) : "trainio";
  logger->set_pattern(who + " %^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::level::level_enum level = comm.is_root() ? spdlog::level::info : spdlog::level::warn;
  std::string text = level_option;
  if (text.empty())
    if (const char* env = std::getenv("TRAINIO_LOG")) text = env;
  if (!text.empty()) {
    level = spdlog::level::from_str(text);
    if (level == spdlog::level::off && text != "off")
      throw usage_error(fmt::format("unknown log level '{}'", text), "use trace, debug, info, warn, error or off");
  }
  spdlog::set_level(level);
}

namespace {
// The run's log file alone, so that an error printed to stderr also ends up in the log the
// results folder keeps (a failed run's log must say why it failed).
std::shared_ptr<spdlog::logger> log_file_only;

void log_to_file(const std::string& text) {
  if (!log_file_only) return;
  log_file_only->error("{}", text);
  log_file_only->flush();
}
}  // namespace

void print_result(const std::string& text_in) {
  const std::string text = util::redact(text_in);
  std::printf("%s", text.c_str());
  std::fflush(stdout);
  if (!log_file_only) return;
  log_file_only->info("{}", text.back() == '\n' ? text.substr(0, text.size() - 1) : text);
  log_file_only->flush();
}

void print_error(const std::string& text_in) {
  const std::string text = util::redact(text_in);
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
  log_to_file(text);
}

void add_log_file(const std::string& path) {
  auto sink = std::make_shared<RedactingSink>(std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, false));
  sink->set_pattern("[%Y-%m-%d %H:%M:%S.%e] %l: %v");
  spdlog::default_logger()->sinks().push_back(sink);
  log_file_only = std::make_shared<spdlog::logger>("trainio-log-file", sink);
  // A log that cannot be written (a full results disk) is said once, with the folder to free,
  // instead of spdlog's raw "[*** LOG ERROR #0001 ***]" line per message.
  const auto once = std::make_shared<std::atomic<bool>>(false);
  const auto said = [once, path](const std::string& what) {
    if (once->exchange(true)) return;
    std::fprintf(stderr, "trainio: warning: the run's log '%s' cannot be written (%s): it ends here\n  fix: free space "
                         "on the file system of the results folder (--output or output.folder), or choose one elsewhere\n",
                 path.c_str(), what.c_str());
    std::fflush(stderr);
  };
  spdlog::default_logger()->set_error_handler(said);
  log_file_only->set_error_handler(said);
}

config::Workload load_workload(const std::vector<std::string>& words, const mpi::Comm& comm) {
  config::Workload w;
  engine::together(comm, [&] {
    const auto split = config::split_args(words);
    w = config::load(split.workload, split.overrides);
  });
  return w;
}

void log_notes(const config::Workload& w, const mpi::Comm& comm) {
  if (!comm.is_root()) return;
  for (const auto& note : w.notes) spdlog::warn("{}", note.message);
  for (const auto& key : config::pending_changes(w))
    spdlog::warn("{} is set, but this build of trainio does not act on it yet: the run goes on without it", key);
}

int guarded(const std::function<int()>& body, const std::unique_ptr<Job>& job) {
  // The job may not exist yet when the error comes (e.g. MPI failed to start).
  auto shared_comm = [&]() -> const mpi::Comm* {
    return job && job->comm().size() > 1 ? &job->comm() : nullptr;
  };
  try {
    return body();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::peer) {
      spdlog::debug("{}", e.what());
      log_to_file(fmt::format("the run failed on another rank (exit {}): its error is on standard error; {}",
                              e.peer_exit_code(), e.what()));
      return e.peer_exit_code();
    }
    const mpi::Comm* comm = shared_comm();
    Error shown = e;
    if (comm) shown.with_rank(comm->rank());
    print_error(format_error(shown));
    // An error that the ranks did not settle together would leave the others waiting: end the job.
    if (comm && !e.settled()) comm->abort(exit_code(e.kind()));
    return exit_code(e.kind());
  } catch (const std::exception& e) {
    print_error(format_error(internal_error(e.what())));
    if (const mpi::Comm* comm = shared_comm()) comm->abort(1);
    return 1;
  }
}

int guarded(const std::function<int()>& body) { return guarded(body, nullptr); }

int run_workload_command(int& argc, char**& argv, const std::string& log_level, const std::vector<std::string>& words,
                         const std::function<int(const mpi::Comm&, const config::Workload&)>& body) {
  std::unique_ptr<Job> job;
  return guarded(
      [&] {
        job = std::make_unique<Job>(&argc, &argv, mpi::launched_by_mpi());
        const mpi::Comm& comm = job->comm();
        setup_logging(comm, log_level);
        const config::Workload w = load_workload(words, comm);
        log_notes(w, comm);
        return body(comm, w);
      },
      job);
}

double parse_bandwidth(const std::string& text) {
  std::string_view size = text;
  if (size.ends_with("/s")) size.remove_suffix(2);
  const auto bytes = util::parse_bytes(size);
  if (!bytes || *bytes == 0)
    throw usage_error(fmt::format("--storage-bandwidth '{}' is not a bandwidth", text), "write it as 10GiB/s or 1250MB/s");
  return static_cast<double>(*bytes);
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i) s += ' ';
    s += argv[i];
  }
  return util::redact(s);
}

}  // namespace trainio::cli
