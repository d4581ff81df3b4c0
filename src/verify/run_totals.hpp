#pragma once
// Everything `trainio verify` rebuilds of one run from its ranks' records and step lists, before
// comparing it with what the run reported.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/checks.hpp"
#include "verify/phase_figures.hpp"
#include "verify/records.hpp"

namespace trainio::verify {

// One checkpoint across ranks.
struct CheckpointTotals {
  std::string kind, folder;
  std::uint64_t index = 0, epoch = 0, step = 0;
  int ranks = 0, ranks_with_data = 0, read_known = 0;
  double duration = 0;          // the slowest rank's own time
  double fastest = 1e300;       // the quickest rank's own I/O, of those that moved data
  double collective = 0;
  double rank_bandwidth_min = 1e300, rank_bandwidth_max = 0;
  // The rank whose own I/O took longest (the lowest such rank on a tie).
  int slowest_rank = -1;
  double slowest_rank_seconds = 0;
  std::uint64_t slowest_rank_file_bytes = 0;
  std::uint64_t files = 0, tensor_bytes = 0, file_bytes = 0, storage_read_bytes = 0;
  Io io;
  void add(const CheckpointLine& c, int rank);
};

struct GenerateTotals {
  bool ran = false;
  double seconds = 0, durable_seconds = 0;  // the slowest rank's each
  std::uint64_t files_written = 0, files_kept = 0;
  Io io;
};

// When the ranks started and how long until their first read of checkpoint data.
struct StartupTotals {
  int ranks_known = 0;           // ranks whose process start the records give
  std::string first_process_start;  // the earliest of them (wall time)
  int ranks_loaded = 0;          // ranks with a first read in a load
  double first_read_max = 0, first_read_min = 1e300;
  int first_read_slowest_rank = -1;  // the lowest rank of first_read_max
  std::optional<FailoverLine> failover;
};

// What the epochs add up to over the run, added to as each epoch's phases are checked and dropped
// (a few numbers an epoch at most: verify's memory does not grow with the epochs).
struct EpochSums {
  std::uint64_t train_phases = 0, phases = 0, rank_phases = 0;
  // DLIO's per-epoch values, in epoch order.
  std::vector<std::optional<double>> train_au, train_throughput, eval_au, eval_throughput;
  // trainio's training figures: each epoch's exact throughput and bytes/s, and their sums.
  std::vector<double> exact, bandwidth;
  std::uint64_t samples = 0;
  PageCache cache;
  Latency sample_read, wait;
  // The client capacity's evidence: training steps, compute and CPU seconds, bytes, duration and
  // the hosts' idle and total CPU ticks.
  double steps = 0, compute = 0, bytes = 0, cpu = 0, polling = 0, duration = 0, idle = 0, ticks = 0;
  Io all;  // every phase's calls
  void add(const PhaseTotals& p);
};

struct RunTotals {
  int ranks = 0;
  // The phases of the epoch being read: (epoch, "train" | "eval"), their ranks in rank order.
  std::map<std::pair<std::uint64_t, std::string>, PhaseTotals> phases;
  EpochSums epochs;
  std::uint64_t summary_epochs = 0;  // entries of the summary's trainio.epochs
  std::map<std::pair<std::string, std::uint64_t>, CheckpointTotals> checkpoints;  // (kind, index)
  GenerateTotals generate;
  double staging_seconds = 0;
  Tier staging;
  Io staging_io;
  std::vector<std::string> hostnames;  // by host index
  int incomplete_ranks = 0;            // ranks whose records end saying a signal stopped the run
  StartupTotals startup;
};

// Seconds since the epoch of an ISO 8601 local time with microseconds as the records write it
// (read as if it were UTC: differences are exact outside a clock change), and from one to another.
std::optional<double> iso_seconds(const std::string& text);
std::optional<double> iso_span(const std::string& start, const std::string& end);

class AsyncChecks;

// Reads every rank's records and step lists into `totals`, epoch by epoch: each epoch's lines of
// every rank, then `on_epoch` with that epoch's phases in `totals.phases` (dropped after it),
// checking on the way what each rank's own files report (DLIO's per-rank AU and throughput,
// per_epoch_stats' spans). `checkpoint_gib`: the summary's metric.checkpoint_size_GB (0 when it
// has none); `async`: the asynchronous checkpoints' checks (null: the run has none).
void read_ranks(const std::string& folder, int ranks, double checkpoint_gib, RunTotals& totals, Checks& checks,
                AsyncChecks* async, const std::function<void(RunTotals&)>& on_epoch);

// Compares summary.json with `totals`: one epoch's entry of trainio.epochs (`index`) with the
// epoch's phases, and the whole run's figures once every epoch is in.
void check_summary_epoch(const JsonValue& entry, std::size_t index, const RunTotals& totals, Checks& checks);
void check_summary(const std::string& folder, const JsonValue& summary, const RunTotals& totals, Checks& checks);

// per_epoch.csv and per_rank.csv, row by row as the epochs come (the rows in the order the run
// writes them).
class CsvChecks {
 public:
  CsvChecks(const std::string& folder, Checks& checks);
  ~CsvChecks();
  void epoch(const RunTotals& totals);  // the rows of totals.phases
  void finish(const RunTotals& totals);  // rows left, and the counts

 private:
  struct Files;
  Files* files_;
  Checks& checks_;
};

}  // namespace trainio::verify
