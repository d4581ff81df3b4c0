#pragma once
// The subcommands behind the CLI. Each returns the process exit code.

#include <string>
#include <vector>

namespace trainio::cli {

struct RunCommand {
  std::vector<std::string> words;  // workload and overrides
  std::string output;              // --output
  std::string log_level;
  bool force = false;
  bool progress = true;
  bool generate_only = false;      // `trainio generate`
  bool trace = false;              // --trace: as workflow.profiling
  double stall_timeout = 600;      // --stall-timeout: seconds a storage call may take; 0: no watchdog
  std::string resume_from;         // --resume-from: the write job's results, for MLPerf's failover gap
  std::string live_json;           // --live-json: a line of JSON per interval while the run goes on
  double live_interval = 1;        // --live-interval: seconds between those lines
  std::string hydra_subdir = ".hydra";  // Hydra's files in the results folder; empty: none
  std::vector<std::string> notes;  // said once the log is up (DLIO's entry: Hydra settings without effect)
};
int run_command(const RunCommand& cmd, int argc, char** argv);

struct ConfigCommand {
  std::vector<std::string> words;
  int ranks = 0;                   // 0: the launcher's job size, or 1
  bool keys = false;               // list every key instead
  std::string storage_bandwidth;   // --storage-bandwidth: predict how many accelerators it feeds
};
int config_command(const ConfigCommand& cmd);

struct ValidateCommand {
  std::vector<std::string> words;
  std::string log_level;
  bool progress = true;
};
int validate_command(const ValidateCommand& cmd, int argc, char** argv);

int workloads_command();

struct DatasizeCommand {
  std::vector<std::string> words;  // workload and overrides
  int accelerators = 0;
  int hosts = 1;
  std::string host_memory;         // empty: this host's memory
};
int datasize_command(const DatasizeCommand& cmd);

struct SweepCommand {
  std::vector<std::string> words;  // workload and the overrides every point shares
  std::vector<std::string> vary;   // KEY=V1,V2,...
  std::string ranks = "1";         // 1,2,4
  int repeat = 1;
  std::string launcher;            // empty: campaign::default_launcher()
  std::string output;
};
int sweep_command(const SweepCommand& cmd);

struct MaxAcceleratorsCommand {
  std::vector<std::string> words;
  int ranks_to = 64;
  std::string storage_bandwidth;   // --storage-bandwidth: the model's prediction, beside the measured answer
  std::string launcher;
  std::string output;
};
int max_accelerators_command(const MaxAcceleratorsCommand& cmd);

struct ReportCommand {
  std::vector<std::string> runs;   // results folders, or folders of them
  bool mlperf = false;             // MLPerf Storage's submission checks
  std::string output;              // empty: aggregate.json beside the runs
  std::string html;                // --html: the runs' charts in one self-contained file
};
int report_command(const ReportCommand& cmd);

struct VerifyCommand {
  std::vector<std::string> runs;   // results folders, or folders of them
  bool all = false;                // --all: print every figure checked, not only the headline ones
};
int verify_command(const VerifyCommand& cmd);

struct CompareCommand {
  std::string baseline, candidate;  // a results folder, or a folder of them, each
  std::vector<std::string> thresholds;  // "5%" for all figures, "FIGURE=10%" for one
  double alpha = 0.05;
  std::vector<std::string> metrics;
  std::string format = "text";      // text, markdown, junit
};
int compare_command(const CompareCommand& cmd);

struct CaptureCommand {
  std::vector<std::string> traces;  // the real job's traces (files or folders)
  std::string output;               // -o: the workload file to write
  std::string name;                 // model.name of the workload
  bool read_files = true;           // read the first bytes of dataset files still at their traced paths
  std::vector<std::string> score;   // --score: the real job's traces, to score a replay against
  std::vector<std::string> replay;  // --replay: the replay's results folder or traces
  bool json = false;
};
int capture_command(const CaptureCommand& cmd);

}  // namespace trainio::cli
