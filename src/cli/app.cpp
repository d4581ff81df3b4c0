#include "cli/app.hpp"

#include <CLI/CLI.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "config/suggest.hpp"
#include "report/run_results.hpp"
#include "util/build_info.hpp"
#include "util/error.hpp"
#include "util/redact.hpp"

namespace trainio::cli {

namespace {

constexpr const char* kWorkloadHelp =
    "Workload, then overrides. The workload is a shipped name (see 'trainio workloads'), DLIO's "
    "workload=NAME, or a YAML file; overrides are section.key=value or DLIO's "
    "++workload.section.key=value (lists as [a,b]).";

constexpr const char* kExitCodes =
    "Exit codes: 0 success, 1 runtime failure (I/O, dataset, a failing rank), 2 usage or config error.\n"
    "Docs: README.md and docs/ in the trainio source tree.";

constexpr const char* kFooter = R"(Examples:
  trainio workloads                                   list shipped workloads
  trainio config unet3d_h100 --ranks 8                resolved config and derived figures
  trainio generate default dataset.data_folder=/mnt/fs/data
  trainio validate default dataset.data_folder=/mnt/fs/data
  mpirun -np 4 trainio run unet3d_h100 ++workload.workflow.generate_data=True
  srun --mpi=pmix -n 16 trainio run my_workload.yaml reader.read_threads=8 --output results/run1
  trainio report results/run1 results/run2 results/run3   one run's table, or the mean and spread of several
  trainio verify results/run1                          every figure recomputed from the run's own records
  trainio compare baseline/ candidate/ --format junit      per figure: change and verdict; exit 1 on regression
  trainio sweep unet3d_h100 --ranks 1,2,4,8 --repeat 3 -o sweeps/unet3d    a campaign, resumable
  trainio max-accelerators unet3d_h100 --ranks-to 32 -o search/unet3d      the most accelerators that pass
  trainio capture job.strace -o job.yaml              a workload from a real job's trace (strace, .pfw, Darshan DXT)
  trainio capture --score job.strace --replay results/replay   how alike the job and its replay are, 0 to 1)";

// A number given on the command line with a lower bound, refused in words: CLI11's own range
// checks print the type's whole range ("0.000000 to 1.79e308").
CLI::Validator number_at_least(bool whole, double least, const std::string& allowed, const std::string& name) {
  return CLI::Validator(
      [=](const std::string& text) -> std::string {
        try {
          std::size_t used = 0;
          const double v = whole ? static_cast<double>(std::stoll(text, &used)) : std::stod(text, &used);
          if (used == text.size() && std::isfinite(v) && v >= least) return "";
        } catch (const std::exception&) {
        }
        return "must be " + allowed + ", not '" + text + "'";
      },
      name);
}
// Counts (ranks, accelerators, hosts) and times in seconds given on the command line.
const CLI::Validator kCountOfOneOrMore = number_at_least(true, 1, "a whole number of 1 or more", "COUNT");
const CLI::Validator kSecondsOrZero = number_at_least(false, 0, "a number of seconds, 0 or more", "SECONDS");

// What a refused command line means, and what to do about it: one line each.
struct UsageProblem {
  std::string cause, fix;
};

UsageProblem explain(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  const std::string list = fmt::format("{}", fmt::join(names, ", "));
  const CLI::App* used = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->parsed()) used = sub;
  const std::string help = used ? fmt::format("'trainio {} --help'", used->get_name()) : std::string("'trainio --help'");
  if (!used && dynamic_cast<const CLI::RequiredError*>(&e)) {
    // CLI11 reports a missing subcommand first, whatever else is wrong: name what was typed.
    if (argc < 2) return {"no subcommand given", "give one of: " + list + " (" + help + " shows examples)"};
    const std::string first = argv[1];
    if (!first.empty() && first[0] == '-')
      return {"unknown option '" + first + "'",
              "options follow the subcommand, e.g. 'trainio run default --output DIR'; subcommands: " + list};
    const std::string near = config::closest(first, names);
    return {"unknown subcommand '" + first + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"),
            "give one of: " + list};
  }
  return {e.what(), "see " + help};
}


// Each subcommand's --help ends with its own examples.
std::string examples(const char* lines) { return std::string("Examples:\n") + lines + "\n" + kExitCodes; }

void add_run_options(CLI::App* sub, RunCommand& cmd) {
  sub->add_option("workload_and_overrides", cmd.words, kWorkloadHelp);
  sub->add_flag("--force", cmd.force,
                "generate into a data folder that is not empty and not a trainio dataset");
  sub->add_flag("!--no-progress", cmd.progress, "no progress lines during generation and long epochs");
  sub->add_option("--log-level", cmd.log_level, "trace, debug, info, warn, error or off (also TRAINIO_LOG)");
  sub->add_option("--stall-timeout", cmd.stall_timeout,
                  "seconds one storage call may take before the job is stopped, naming the call, the file and the "
                  "rank (a hung mount would otherwise hang the job); 0 turns this off (default 600)")
      ->check(kSecondsOrZero);
  sub->add_option("--live-json", cmd.live_json,
                  "a new file that rank 0 appends a line of JSON to every --live-interval seconds while the run goes "
                  "on: phase, step, AU and samples/s so far, rank 0's bytes read and written and their rates (as fio's "
                  "--status-interval); a last line marked final");
  sub->add_option("--live-interval", cmd.live_interval, "seconds between --live-json lines (default 1)")
      ->check(number_at_least(false, 0.01, "a number of seconds, 0.01 or more", "SECONDS"));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "trainio - can this storage feed deep-learning training?\n"
      "Generates datasets in the formats training reads, replays what training does to storage across\n"
      "MPI ranks (launch with mpirun or srun), and reports DLIO-compatible metrics.",
      "trainio"};
  app.footer(std::string(kFooter) + "\n\n" + kExitCodes);
  app.set_version_flag("--version", std::string("trainio ") + util::version() + " (" + util::git_commit() + ")");
  app.require_subcommand(1);

  RunCommand run_cmd;
  auto* run = app.add_subcommand("run", "Run the workload's workflow: generate data if it asks to, then train "
                                        "(evaluating and checkpointing), or checkpoint only, and write results");
  add_run_options(run, run_cmd);
  run->footer(examples(
      "  trainio run default                                  the default workload on ./data, results in trainio-output/\n"
      "  trainio run unet3d_h100 dataset.data_folder=/mnt/fs/unet3d --output results/run1\n"
      "  mpirun -np 8 --bind-to none trainio run resnet50_h100 reader.read_threads=4\n"
      "  srun --mpi=pmix -n 16 trainio run my_workload.yaml ++workload.train.epochs=3\n"
      "  trainio run cosmoflow_h100 --trace                   also a Perfetto trace of phases, steps and calls\n"
      "  trainio run default --stall-timeout 1800             allow storage calls up to 30 minutes\n"
      "  trainio run llama3_8b checkpoint.num_checkpoints_write=0 --resume-from results/write   the read job of a failover"));
  run->add_option("--output,-o", run_cmd.output,
                  "results folder (default: output.folder, else trainio-output/<workload>-<time>)");
  run->add_option("--resume-from", run_cmd.resume_from,
                  "the results folder of the job that wrote the checkpoints this run reads (MLPerf's failover, "
                  "write and read as two jobs): reports the gap from that job's end to this one's start, against "
                  "MLPerf's 30 s, and the time from start to the first checkpoint byte read");
  run->add_flag("--trace", run_cmd.trace,
                "write trace-<rank>-of-<size>.pfw in the results folder: phases, steps and storage calls as Chrome "
                "trace events for Perfetto (as workflow.profiling; output.trace_every samples the storage calls)");

  RunCommand gen_cmd;
  gen_cmd.generate_only = true;
  auto* gen = app.add_subcommand("generate", "Generate the workload's dataset only (resumes an interrupted one)");
  add_run_options(gen, gen_cmd);
  gen->footer(examples(
      "  trainio generate default dataset.data_folder=/mnt/fs/data\n"
      "  mpirun -np 8 trainio generate unet3d_h100 dataset.num_files_train=3200   ranks share the files\n"
      "  trainio generate default dataset.format=hdf5 --force   into a folder that holds other files"));

  ConfigCommand config_cmd;
  auto* config = app.add_subcommand("config", "Print the resolved workload as YAML and what it implies: "
                                              "samples, bytes, steps per rank (no I/O)");
  config->add_option("workload_and_overrides", config_cmd.words, kWorkloadHelp);
  config->add_option("--storage-bandwidth", config_cmd.storage_bandwidth,
                     "a storage bandwidth (10GiB/s): also print how many accelerators it feeds at the AU target, "
                     "predicted from the per-accelerator demand (trainio max-accelerators measures it)");
  config->add_option("--ranks,-n", config_cmd.ranks, "ranks to plan for (default: the MPI job size, else 1)")
      ->check(kCountOfOneOrMore);
  config->footer(examples(
      "  trainio config unet3d_h100 --ranks 8                resolved workload, sizes, steps per rank\n"
      "  trainio config my_workload.yaml reader.batch_size=8  what an override changes\n"
      "  trainio config --keys reader                         every reader key, its default and meaning"));
  config->add_flag("--keys", config_cmd.keys,
                   "list every workload key trainio knows, with its status and meaning; 'config --keys reader' lists "
                   "one section's");

  ValidateCommand validate_cmd;
  auto* validate = app.add_subcommand("validate", "Check every file of the workload's dataset: complete, well formed, "
                                                  "holding the expected samples (checksums where the format has them)");
  validate->add_option("workload_and_overrides", validate_cmd.words, kWorkloadHelp);
  validate->add_flag("!--no-progress", validate_cmd.progress, "no progress lines");
  validate->add_option("--log-level", validate_cmd.log_level, "trace, debug, info, warn, error or off (also TRAINIO_LOG)");
  validate->footer(examples(
      "  trainio validate default dataset.data_folder=/mnt/fs/data     every file decoded and checked\n"
      "  mpirun -np 8 trainio validate unet3d_h100 dataset.data_folder=/mnt/fs/unet3d   ranks share the files"));

  app.add_subcommand("workloads", "List the shipped workloads")
      ->footer(examples("  trainio workloads                      one line each: name and what it models\n"
                        "  trainio config $(trainio workloads | awk '/unet3d/{print $1; exit}')"));

  DatasizeCommand datasize_cmd;
  auto* datasize = app.add_subcommand("datasize", "MLPerf Storage's dataset size for a workload: the larger of 500 steps "
                                                  "per accelerator and 5x the hosts' memory, as files, subfolders, bytes "
                                                  "and the override to use");
  datasize->add_option("workload_and_overrides", datasize_cmd.words, kWorkloadHelp)->required();
  datasize->add_option("--accelerators,-n", datasize_cmd.accelerators, "simulated accelerators (ranks) in all")
      ->required()->check(kCountOfOneOrMore);
  datasize->add_option("--hosts", datasize_cmd.hosts, "client hosts (default 1)")->check(kCountOfOneOrMore);
  datasize->footer(examples(
      "  trainio datasize unet3d_h100 -n 8                    one host with this host's memory\n"
      "  trainio datasize resnet50_h100 -n 64 --hosts 8 --host-memory 512"));
  datasize->add_option("--host-memory", datasize_cmd.host_memory,
                       "each host's memory: a bare number is GiB (as mlpstorage), else a size like 128GiB "
                       "(default: this host's)");

  ReportCommand report_cmd;
  auto* report = app.add_subcommand(
      "report", "Show a finished run; for several runs, MLPerf's aggregate (mean, stdev, CV, spread, flagged beyond "
                "5%) of each configuration among them (runs of different configurations are never averaged), written "
                "to aggregate.json beside the runs");
  report->add_option("runs", report_cmd.runs, "results folders (or folders of them)")->required()->check(CLI::ExistingDirectory);
  report->add_flag("--mlperf", report_cmd.mlperf,
                   "MLPerf Storage's submission checks: the first run is the warm-up, then 5 runs, one after the other, "
                   "each passing AU, within 5% of each other, each with its own seed, all of one configuration, each an MLPerf "
                   "benchmark whose resolved values differ from MLPerf's only where CLOSED or OPEN allows (exit 1 when a "
                   "check fails)");
  report->add_option("--output,-o", report_cmd.output,
                     "where to write the aggregate, a new file (default: aggregate.json in the folder holding the "
                     "runs, numbered aggregate-2.json, ... when one is there)");
  report->add_option("--html", report_cmd.html,
                     "also write the runs' charts to this new file: AU and throughput per epoch against the target, "
                     "step time, latency percentiles, rank spread, checkpoints (self-contained: inline SVG, no script)");
  report->footer(examples(
      "  trainio report results/run1                          one run's table\n"
      "  trainio report results/                              every run in the folder: mean and spread of each\n"
      "                                                       configuration, in results/aggregate.json\n"
      "  trainio report results/ --mlperf                     MLPerf Storage's submission checks\n"
      "  trainio report results/run1 --html run1.html         the run's charts, in one file for a browser"));

  VerifyCommand verify_cmd;
  auto* verify = app.add_subcommand(
      "verify", "Prove a run's figures: recompute every figure of summary.json, the CSVs and DLIO's per-rank files "
                "from the raw records the run kept (<rank>_records.jsonl, the step lists), by code apart from the "
                "code that reported them; exit 1 on any figure that disagrees or any record missing or cut short, 2 "
                "on a folder that is not a run");
  verify->add_option("runs", verify_cmd.runs,
                     "results folders (or folders of them: the aggregates `trainio report` wrote there are checked too), "
                     "or an aggregate file")
      ->required()
      ->check(CLI::ExistingPath);
  verify->add_flag("--all", verify_cmd.all, "print every figure checked (default: the headline figures and every mismatch)");
  verify->footer(examples(
      "  trainio verify results/run1                          the run's headline figures, reported and recomputed\n"
      "  trainio verify results/ --all                        every run in the folder and its aggregates, every figure\n"
      "  trainio verify results/aggregate.json                the aggregate against its runs' summaries"));

  SweepCommand sweep_cmd;
  auto* sweep = app.add_subcommand(
      "sweep", "Run a workload over combinations of keys' values and rank counts, each run its own mpirun or srun "
               "job, resumable; a row per point (AU, samples/s, read MiB/s, pass or fail) in DIR/sweep.csv");
  sweep->add_option("workload_and_overrides", sweep_cmd.words, kWorkloadHelp)->required();
  sweep->add_option("--vary", sweep_cmd.vary, "KEY=V1,V2,...: a key and the values to try (repeatable: every combination)")
      ->allow_extra_args(false);  // one KEY=V1,V2 per --vary: the words after it stay the workload's
  sweep->add_option("--ranks", sweep_cmd.ranks, "rank counts to try, as 1,2,4 (default 1)");
  sweep->add_option("--repeat", sweep_cmd.repeat, "runs per point (default 1)")->check(kCountOfOneOrMore);
  sweep->add_option("--launcher", sweep_cmd.launcher,
                    "how to start a run of {ranks} ranks (default 'mpirun -np {ranks}'; inside a Slurm allocation "
                    "'srun --mpi=pmix -n {ranks}')");
  sweep->add_option("--output,-o", sweep_cmd.output, "the sweep's folder: a folder per point, a run folder per repeat")
      ->required();
  sweep->footer(examples(
      "  trainio sweep unet3d_h100 dataset.data_folder=/mnt/fs/unet3d --ranks 1,2,4,8 --repeat 3 -o sweeps/unet3d\n"
      "  trainio sweep default --vary reader.read_threads=1,2,4 --vary reader.batch_size=4,16 -o sweeps/threads\n"
      "  trainio sweep resnet50_h100 --ranks 8,16 --launcher 'mpirun -np {ranks} --hostfile hosts' -o sweeps/r50\n"
      "  trainio report sweeps/threads                        the same runs, aggregated per configuration"));

  MaxAcceleratorsCommand max_cmd;
  auto* max_accelerators = app.add_subcommand(
      "max-accelerators",
      "The largest number of accelerators (ranks) whose training meets the AU target (metric.au) on this storage: "
      "doubling, then bisection, every probe a real run kept with its figures");
  max_accelerators->add_option("workload_and_overrides", max_cmd.words, kWorkloadHelp)->required();
  max_accelerators->add_option("--ranks-to", max_cmd.ranks_to, "the most ranks to try (default 64)")->check(kCountOfOneOrMore);
  max_accelerators->add_option("--launcher", max_cmd.launcher,
                               "how to start a run of {ranks} ranks (default 'mpirun -np {ranks}'; inside a Slurm "
                               "allocation 'srun --mpi=pmix -n {ranks}')");
  max_accelerators->add_option("--output,-o", max_cmd.output, "folder for the probes and the answer")->required();
  max_accelerators->add_option("--storage-bandwidth", max_cmd.storage_bandwidth,
                               "the storage's bandwidth (10GiB/s), to show the predicted count beside the measured one");
  max_accelerators->footer(examples(
      "  trainio max-accelerators unet3d_h100 dataset.data_folder=/mnt/fs/unet3d --ranks-to 32 -o search/unet3d\n"
      "  salloc -N 4 trainio max-accelerators unet3d_h100 --ranks-to 128 -o search/unet3d   srun inside the allocation"));

  CompareCommand compare_cmd;
  std::string figures_help =
      "figure to compare (repeatable; default: every steady figure both sides have, tail percentiles only when "
      "named). Known:";
  for (const auto& f : report::known_figures()) figures_help += std::string("\n  ") + f.name + "  " + f.help;
  figures_help += "\nor a dotted path into summary.json, e.g. trainio.epochs.0.train.au_percentage";
  auto* compare = app.add_subcommand(
      "compare", "Compare a candidate with a baseline, each a run or a set of runs: per figure the medians, the change "
                 "and a verdict; exit 1 on a regression: worse by more than the threshold and, when each side has 3 or "
                 "more runs, significant (two-sided Mann-Whitney U p < --alpha, exact up to 11 runs a side); 2 on "
                 "unusable input");
  compare->add_option("baseline", compare_cmd.baseline, "results folder, or a folder of them")->required();
  compare->add_option("candidate", compare_cmd.candidate, "results folder, or a folder of them")->required();
  compare->add_option("--threshold", compare_cmd.thresholds,
                      "smallest change that counts: 5% (the default) for every figure, or FIGURE=10% for one "
                      "(repeatable)");
  compare->add_option("--alpha", compare_cmd.alpha, "significance level: with 3 or more runs a side a change beyond the threshold counts only "
                                     "when the U test's p < alpha; between 0 and 1 (default 0.05)");
  compare->add_option("--metric", compare_cmd.metrics, figures_help);
  compare->add_option("--format", compare_cmd.format, "text, markdown or junit (default text)");
  compare->footer(examples(
      "  trainio compare baseline/ candidate/                 every figure: medians, change, verdict\n"
      "  trainio compare main/ pr/ --metric train_throughput_mean_samples_per_second --threshold 10%\n"
      "  trainio compare nightly/ today/ --format junit > compare.xml   for CI"));

  CaptureCommand capture_cmd;
  auto* capture = app.add_subcommand(
      "capture", "From a real job's traces (strace -f -tt -T, .pfw of DLIO or trainio, darshan-dxt-parser text; gzip or "
                 "not) to a workload file that 'trainio run' accepts, each value commented with its evidence; with "
                 "--score, a similarity in [0, 1] between the job's trace and its replay's (docs/capture.md)");
  capture->add_option("traces", capture_cmd.traces, "trace files, or folders of them (strace -ff files, a results folder)");
  capture->add_option("--output,-o", capture_cmd.output, "the workload file to write");
  capture->add_option("--name", capture_cmd.name, "model.name of the workload (default captured)");
  capture->add_flag("!--no-read-files", capture_cmd.read_files,
                    "do not read the first bytes of dataset files still at their traced paths (the format then comes "
                    "from names)");
  capture->add_option("--score", capture_cmd.score, "the real job's traces: score a replay against them");
  capture->add_option("--replay", capture_cmd.replay,
                      "with --score: the replay's results folder (a run with --trace) or an strace of it");
  capture->add_flag("--json", capture_cmd.json, "with --score: the parts and total as JSON");
  capture->footer(examples(
      "  strace -f -tt -T -o job.strace python3 train.py      trace the real job (its workers too)\n"
      "  trainio capture job.strace -o job.yaml               the workload, each value with its evidence\n"
      "  trainio generate job.yaml && trainio run job.yaml workflow.generate_data=False --trace -o results/replay\n"
      "  trainio capture --score job.strace --replay results/replay   each part, the total, the largest differences"));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const UsageProblem problem = explain(app, e, argc, argv);
    std::fprintf(stderr, "%s\n", util::redact(format_error(usage_error(problem.cause, problem.fix))).c_str());
    return 2;
  }
  if (run->parsed()) return run_command(run_cmd, argc, argv);
  if (gen->parsed()) return run_command(gen_cmd, argc, argv);
  if (config->parsed()) return config_command(config_cmd);
  if (validate->parsed()) return validate_command(validate_cmd, argc, argv);
  if (report->parsed()) return report_command(report_cmd);
  if (verify->parsed()) return verify_command(verify_cmd);
  if (compare->parsed()) return compare_command(compare_cmd);
  if (datasize->parsed()) return datasize_command(datasize_cmd);
  if (sweep->parsed()) return sweep_command(sweep_cmd);
  if (max_accelerators->parsed()) return max_accelerators_command(max_cmd);
  if (capture->parsed()) return capture_command(capture_cmd);
  return workloads_command();
}

}  // namespace trainio::cli
