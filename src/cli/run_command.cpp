#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "config/dump.hpp"
#include "engine/load/loader.hpp"
#include "engine/preflight.hpp"
#include "engine/together.hpp"
#include "engine/stall_watchdog.hpp"
#include "engine/workflow.hpp"
#include "metrics/summary.hpp"
#include "metrics/trace.hpp"
#include "mlperf/rules.hpp"
#include "mpi/launcher.hpp"
#include "plan/checkpoint_plan.hpp"
#include "plan/run_plan.hpp"
#include "report/console_reporter.hpp"
#include "report/context.hpp"
#include "report/hydra_files.hpp"
#include "report/live_json.hpp"
#include "report/records_file.hpp"
#include "report/reporter.hpp"
#include "report/results.hpp"
#include "report/run_results.hpp"
#include "report/tables.hpp"
#include "report/trace_file.hpp"
#include "storage/errno_hint.hpp"
#include "storage/fs.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/host_info.hpp"
#include "util/paths.hpp"
#include "util/proc_stats.hpp"
#include "util/stop_request.hpp"
#include "util/units.hpp"

namespace trainio::cli {

namespace {

report::HydraRun hydra_run(const RunCommand& cmd, const std::string& out_dir, const std::string& program) {
  report::HydraRun run;
  run.run_dir = out_dir;
  std::error_code ec;
  run.cwd = std::filesystem::current_path(ec).string();
  run.output_dir = std::filesystem::absolute(out_dir, ec).lexically_normal().string();
  run.subdir = cmd.hydra_subdir;
  run.job_name = program.substr(program.find_last_of('/') + 1);
  return run;
}

// The results folder: --output, else output.folder, else trainio-output/<workload>-<time>. A
// folder that already holds a run's results is never written over.
std::string prepare_output(const std::string& option, const config::Workload& w, const mpi::Comm& comm) {
  std::string chosen = option.empty() ? w.output.folder : option;
  const bool named = !chosen.empty();
  std::string dir;
  engine::together(comm, [&] {
    if (!comm.is_root()) return;
    if (named) {
      dir = util::strip_trailing_slashes(chosen);
      if (storage::file_size(util::join(dir, "summary.json")))
        throw usage_error(fmt::format("the results folder '{}' already holds a run (summary.json)", dir),
                          "choose another --output (or output.folder), or move the earlier results away");
    } else {
      const std::string base = "trainio-output/" + w.name + "-" + util::wall_time_compact();
      dir = base;
      for (int n = 2; storage::is_dir(dir); ++n) dir = fmt::format("{}-{}", base, n);
    }
    // Results inside the data folder would make it a folder that is not only the dataset's
    // (generation then refuses it, and keep_files: false would delete around the results).
    if (const std::string data = plan::DatasetLayout(w).root(); util::is_within(dir, data))
      throw usage_error(fmt::format("the results folder '{}' is inside the data folder '{}'", dir, data),
                        "choose a results folder (--output or output.folder) outside dataset.data_folder");
    storage::make_dirs(dir);
    // What a run stopped without its chance to clean up (SIGKILL) left here under temporary names.
    storage::remove_temporaries_in(dir);
  });
  return comm.broadcast(dir);
}

// --resume-from: the write job's results (one run that saved checkpoints), whose end starts the
// failover gap. Read on every rank before anything runs, so a wrong folder is a usage error.
report::Failover failover_from(const std::string& folder, const config::Workload& w) {
  const auto fix = "give --resume-from the results folder of the run that wrote the checkpoints";
  if (!w.workflow.checkpoint || w.workflow.train || w.checkpoint.num_checkpoints_read <= 0)
    throw usage_error("--resume-from is for a checkpoint-only run that reads checkpoints (the read job of a failover)",
                      "set workflow.checkpoint=True, workflow.train=False and checkpoint.num_checkpoints_read, or drop "
                      "--resume-from");
  const std::vector<report::RunResult> runs = report::load_runs(folder);
  if (runs.size() != 1)
    throw usage_error(fmt::format("--resume-from '{}' holds {} runs, not one", folder, runs.size()), fix);
  const report::RunResult& run = runs.front();
  if (run.end.empty() || report::number_at(run.summary, "trainio.checkpoint.saves.count").value_or(0) < 1)
    throw usage_error(fmt::format("--resume-from '{}' is not a run that saved checkpoints", folder), fix);
  return {folder, run.end};
}

}  // namespace

int run_command(const RunCommand& cmd, int argc, char** argv) {
  return run_workload_command(
      argc, argv, cmd.log_level, cmd.words, [&](const mpi::Comm& comm, const config::Workload& w) {
        // Ctrl-C or SIGTERM (a Slurm time limit, mpirun ending the job): stop after the step, keep the results.
        util::install_stop_handlers();
        if (comm.is_root())
          for (const auto& note : cmd.notes) spdlog::warn("{}", note);
        const plan::DatasetLayout layout(w);
        // A local cache tier's copies are data files too: their reads are probed like the dataset's.
        std::vector<std::string> data_folders{layout.root(), plan::checkpoint_root(w)};
        if (w.cache.tier == config::CacheTier::local_ssd) data_folders.push_back(w.cache.path);
        storage::set_data_folders(std::move(data_folders));
        // The folders a storage error's fix names, by the key that sets each.
        storage::name_folder(layout.root(), "dataset.data_folder", true);
        storage::name_folder(plan::checkpoint_root(w), "checkpoint.checkpoint_folder");
        if (w.cache.tier == config::CacheTier::local_ssd) storage::name_folder(w.cache.path, "cache.path");
        const bool trains = w.workflow.train && !cmd.generate_only;
        plan::RunShape shape;
        engine::together(comm, [&] { shape = engine::preflight(w, comm.size(), cmd.generate_only); });

        if (const auto warning = plan::few_steps_warning(shape, w); comm.is_root() && trains && !warning.empty())
          spdlog::warn("{}", warning);
        if (!cmd.live_json.empty()) engine::together(comm, [&] { report::LiveJson::check_new(cmd.live_json); });
        std::optional<report::Failover> failover;
        if (!cmd.resume_from.empty()) engine::together(comm, [&] { failover = failover_from(cmd.resume_from, w); });
        std::string out_dir;
        if (!cmd.generate_only) {
          out_dir = prepare_output(cmd.output, w, comm);
          storage::name_folder(out_dir, "the results folder (--output or output.folder)");
          if (comm.is_root()) add_log_file(util::join(out_dir, w.output.log_file));
          // Hydra's record of the run, written before it starts as Hydra does (mlpstorage reads it).
          engine::together(comm, [&] {
            if (comm.is_root()) report::write_hydra_files(w, hydra_run(cmd, out_dir, argc > 0 ? argv[0] : "trainio"));
          });
          spdlog::info("workload '{}' on {} rank{}; results in {}", w.name, comm.size(), comm.size() == 1 ? "" : "s", out_dir);
        }

        // A launcher that binds a rank to fewer cores than its reader threads, alone or with the
        // other ranks bound to the same ones, makes trainio measure itself. (The training thread
        // sleeps through the emulated compute; it needs no core of its own. A machine that simply
        // has few cores is not a binding and is not warned about.)
        const int readers = static_cast<int>(std::max<std::int64_t>(1, w.reader.read_threads));
        const engine::RankCores mine = engine::rank_cores(comm);
        const bool short_of_cores = util::bound_cores() && mine.share() < readers;
        const double client_cores = comm.sum(mine.share());
        // The rank with the smallest share speaks for all.
        const double share = comm.min(short_of_cores ? mine.share() : static_cast<double>(readers));
        const int sharing = static_cast<int>(comm.max(static_cast<std::int64_t>(
            short_of_cores && mine.share() == share ? mine.sharing : 0)));
        if (comm.is_root() && share < readers && w.workflow.train && !cmd.generate_only)
          spdlog::warn("a rank may run on only {:.3g} core{} (its CPU binding{}) but runs {} reader thread{}; bind ranks "
                       "to more cores (OpenMPI: --bind-to none or --map-by slot:PE=<n>; Slurm: --cpus-per-task=<n>)",
                       share, share == 1 ? "" : "s",
                       sharing > 1 ? fmt::format(", shared by {} ranks", sharing) : "", readers, readers == 1 ? "" : "s");

        // MLPerf's dataset rule, for this job: every host is taken to have this host's memory.
        if (const auto* b = mlperf::find_benchmark(w.name); comm.is_root() && trains && b && b->kind == mlperf::Kind::training) {
          const auto ranks = static_cast<std::uint64_t>(comm.size());
          const auto hosts = static_cast<std::uint64_t>(std::max(1, comm.num_hosts()));
          const auto memory = util::host_info().memory_bytes;
          if (auto shortfall = mlperf::dataset_shortfall(w, mlperf::required_dataset(w, ranks, hosts, memory), ranks, hosts, memory))
            spdlog::warn("{} (a result below this size is not a valid MLPerf result)", *shortfall);
        }

        if (!cmd.generate_only && (cmd.trace || w.workflow.profiling)) {
          // Every rank's times count from rank 0's clock reading, so ranks line up in one view.
          const metrics::trace::Process process{comm.rank(), util::hostname(), comm.broadcast(metrics::trace::wall_clock_us())};
          metrics::trace::name_thread("main (training loop)");
          engine::together(comm, [&] {
            metrics::trace::start(
                report::open_trace_file(util::join(out_dir, fmt::format("trace-{}-of-{}.pfw", comm.rank(), comm.size()))),
                process, static_cast<std::uint64_t>(w.output.trace_every));
          });
        }

        engine::WorkflowOptions options;
        options.generate_only = cmd.generate_only;
        options.force = cmd.force;
        options.progress = cmd.progress;
        options.step_log_folder = out_dir;
        // Before the run (collective): the hosts' names label per_rank.csv's rows as each phase
        // ends, and the results' context.
        report::RunHosts hosts = report::gather_hosts(comm);
        // The run's outputs, in the order their files are written at the end: DLIO's files, then
        // summary.json, per_rank.csv and every rank's records.
        report::Reporters reporters;
        if (!cmd.generate_only) {
          reporters.add(std::make_unique<report::DlioFiles>(out_dir, comm.rank(), comm.node_size()));
          if (comm.is_root()) reporters.add(std::make_unique<report::SummaryFiles>(out_dir));
        }
        report::PerRankCsv* per_rank = nullptr;
        if (comm.is_root() && !cmd.generate_only)
          per_rank = reporters.add(std::make_unique<report::PerRankCsv>(util::join(out_dir, "per_rank.csv"), hosts.hostnames()));
        metrics::RunSummarizer summarizer(comm, per_rank);
        // Every rank's evidence, from which the figures can be recomputed (trainio verify).
        if (!cmd.generate_only)
          engine::together(comm, [&] {
            auto records = std::make_unique<report::RecordsFile>(
                out_dir, report::RecordsHeader{comm.rank(), comm.size(), comm.host_index(), util::host_info().hostname,
                                               static_cast<std::uint64_t>(w.reader.batch_size),
                                               static_cast<std::uint64_t>(w.reader.batch_size_eval),
                                               static_cast<std::uint64_t>(w.output.exclude_start_steps),
                                               static_cast<std::uint64_t>(w.output.exclude_end_steps), mine.share()});
            if (failover) records->add_failover(failover->previous_results, failover->previous_end);
            reporters.add(std::move(records));
          });
        if (comm.is_root())
          reporters.add(std::make_unique<report::ConsoleReporter>(w, layout, shape, out_dir, cmd.generate_only,
                                                                  print_result));
        if (w.checkpoint.async && w.workflow.checkpoint) summarizer.track_flush_overlap();
        options.on_epoch = [&](const metrics::EpochRecord& e) {
          reporters.epoch_measured(e);
          reporters.epoch_summarised(summarizer.add(e));
        };
        options.on_checkpoint = [&](const metrics::CheckpointRecord& c) {
          reporters.checkpoint_measured(c);
          reporters.checkpoint_summarised(summarizer.add(c));
        };
        // --live-json: rank 0 streams where the run stands, a line per interval, until the end.
        if (!cmd.live_json.empty())
          engine::together(comm, [&] {
            if (comm.is_root()) reporters.add(std::make_unique<report::LiveJson>(cmd.live_json, cmd.live_interval, comm.size()));
          });
        // A storage call that never returns (a hung mount) ends the job with its name, not a hang.
        const engine::StallWatchdog watchdog(cmd.stall_timeout, comm.rank(), [&comm](const std::string& message) {
          print_error(message);
          comm.abort(1);  // MPI_Abort from the watchdog's thread: the stuck one cannot be joined
        });
        const metrics::RankRecord record = engine::run_workflow(w, comm, options);
        engine::together(comm, [] { metrics::trace::finish(); });  // a trace that did not fit fails every rank
        metrics::RunSummary summary = summarizer.finish(record);
        summary.client_cores = client_cores;

        // A run that only generates data writes no summary and no per-rank files, as DLIO: tools
        // that list runs by their summary.json (mlpstorage) must not count it as one.
        if (cmd.generate_only || (!w.workflow.train && !w.workflow.checkpoint)) {
          reporters.generated(summary);
          return 0;
        }

        report::RunContext context =
            report::context_of(layout, comm, mpi::launched_by_mpi(), command_line(argc, argv), out_dir, std::move(hosts));
        context.failover = failover;
        const report::ResultsOf results{w, layout, shape, record, summary, context};
        engine::together(comm, [&] { reporters.write_results(results); });
        reporters.finished(results);
        if (summary.stop_signal != 0) {
          reporters.stopped(fmt::format("{} stopped the run in epoch {} ({})", util::signal_name(summary.stop_signal),
                                        summary.stop_epoch, summary.stop_phase));
          return util::stop_exit_code(summary.stop_signal);
        }
        return 0;
      });
}

}  // namespace trainio::cli
