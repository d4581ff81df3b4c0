#pragma once
// The run's figures across all ranks (REFERENCE §5): per epoch, DLIO's AU (mean over ranks) and
// throughput (sum over ranks), trainio's exact throughput, measured bytes and latencies.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/async_summary.hpp"
#include "metrics/reshard_summary.hpp"
#include "metrics/histogram.hpp"
#include "metrics/io_recorder.hpp"
#include "metrics/run_record.hpp"
#include "metrics/straggler.hpp"

namespace trainio::mpi {
class Comm;
}

namespace trainio::metrics {

// One rank's figures in a phase, for the straggler view and per_rank.csv.
struct RankFigures {
  int rank = 0;
  int host = 0;               // index into the run's hosts
  double duration = 0;        // seconds
  std::uint64_t samples = 0;
  std::uint64_t bytes_read = 0;
  std::optional<double> throughput_dlio;  // samples/s, DLIO's formula; absent: no value
  double throughput = 0;             // samples/s, trainio's exact window
  std::optional<double> au;          // fraction; absent: no value
  double cpu_user = 0, cpu_sys = 0;
  double cpu_polling = 0;  // of cpu_user + cpu_sys: the training loop polling for its batches
  // Its steps' time summed over the phase (seconds: the sums of its step histograms, which count
  // the logged step lists' values in whole nanoseconds): waiting for its
  // batches, the emulated compute, and waiting at the step-end barrier for the other ranks.
  double batch_wait = 0, compute = 0, barrier = 0;
  double own() const { return batch_wait + compute; }  // its own part of the steps
};

// One host's ranks in a phase: the straggler view per host.
struct HostFigures {
  int ranks = 0;
  double slowest = 0;  // seconds: its slowest rank's phase
  std::uint64_t samples = 0, bytes_read = 0;
};

struct PhaseSummary {
  std::uint64_t steps = 0;            // per rank
  double duration = 0;                // slowest rank's phase wall time
  // DLIO's figures; absent when some rank's has no value (see BlockResult).
  std::optional<double> au;           // mean over ranks (fraction)
  std::optional<double> throughput_dlio;  // samples/s, sum over ranks, DLIO's formula
  double throughput = 0;              // samples/s, sum over ranks, exact window
  std::uint64_t samples = 0;          // over all ranks
  std::uint64_t sample_bytes = 0;     // over all ranks, sample data delivered
  std::uint64_t bytes_read = 0;       // over all ranks, bytes the storage calls returned
  double read_bandwidth = 0;          // bytes_read / duration
  double au_min = 0, au_max = 0;      // spread over ranks (when au has a value)
  std::uint64_t storage_read_bytes = 0;  // page-cache misses, all ranks (/proc/self/io)
  bool storage_read_known = false;
  std::uint64_t device_read_bytes = 0;   // the data folder's block device, all nodes
  bool device_read_known = false;
  bool degenerate = false;            // some rank had too few steps for the exclusions
  Histogram wait_ns, sample_ns, compute_ns, barrier_ns;
  IoRecorder io;
  bool tiered = false;  // a cache tier served the phase
  TierStats tier;       // all ranks
  // Stragglers: the slowest and fastest ranks' figures (by their own time: batch wait + compute,
  // not their wall time, which the step-end barriers make alike), the straggler, each host's (by host index), and the
  // aggregate read bandwidth when the first rank was done (ranks assumed to progress evenly) and
  // when the last was (elbencho's first-done and last-done figures). Every rank's figures
  // (`ranks`) only until the phase is summarised: a RunSummarizer hands them to its RankRows
  // (per_rank.csv) first, so that a run keeps per phase what grows with its hosts, not its ranks.
  // Rank 0's only, with the sums over them (cpu_*): the other ranks receive no per-rank figures.
  int rank_count = 0;
  RankFigures slowest, fastest;
  Straggler straggler;
  std::vector<HostFigures> hosts;
  std::vector<RankFigures> ranks;
  double first_done_bandwidth = 0, last_done_bandwidth = 0;
  double cpu_user = 0, cpu_sys = 0;   // all ranks (rank 0's summary)
  double cpu_polling = 0;             // all ranks (rank 0's summary): of cpu_user + cpu_sys, training loops polling
  // The loaders' reads, all ranks (ReadPhase::Readers); readers_known: every rank measured them.
  bool readers_known = false;
  std::uint64_t reader_threads = 0, reader_max_in_flight = 0;
  std::uint64_t reader_busy_ns = 0, reader_cpu_ns = 0, reader_at_max_ns = 0;
  bool run_delay_known = false;  // every rank's readers' run delay known
  std::uint64_t reader_run_delay_ns = 0;
  // The ranks' hosts' CPU ticks over the phase (/proc/stat, machine-wide), summed over the ranks
  // that could read them: idle and total. 0 total: unknown.
  std::uint64_t host_ticks_idle = 0, host_ticks_total = 0;
};

struct EpochSummary {
  std::uint64_t epoch = 0;
  std::string start, end;
  PhaseSummary train;
  std::optional<FlushOverlapSummary> flush_overlap;  // checkpoint.async: the training steps by flush
  bool evaluated = false;
  PhaseSummary eval;
};

struct GenerateSummary {
  bool ran = false;
  double seconds = 0;                 // slowest rank's writing (GenerateRecord::seconds)
  std::uint64_t files_written = 0, files_kept = 0;
  std::uint64_t bytes_written = 0;
  double write_bandwidth = 0;         // bytes_written / seconds
  double durable_seconds = 0;         // slowest rank's time until its files were durable
  double durable_bandwidth = 0;       // bytes_written / durable_seconds
  IoRecorder io;
};

// One checkpoint across all ranks. MLPerf's rule: its duration is the slowest rank's, so its
// bandwidth is the whole checkpoint over that duration.
struct CheckpointSummary {
  CheckpointRecord::Kind kind = CheckpointRecord::Kind::save;
  std::uint64_t index = 0, epoch = 0, step = 0;
  std::string folder, start, end;    // start and end as rank 0 saw them
  double duration = 0;               // slowest rank (its own time: CheckpointTimeline::seconds)
  double fastest = 0;                // quickest rank that moved data (its own I/O: io_seconds)
  double collective = 0;             // until all ranks had agreed it succeeded (slowest rank's view)
  std::uint64_t files = 0;
  std::uint64_t tensor_bytes = 0;    // all ranks
  std::uint64_t file_bytes = 0;      // all ranks, with the archives' headers
  double bandwidth = 0;              // file_bytes / duration
  double rank_bandwidth_min = 0, rank_bandwidth_max = 0;  // over ranks that moved data, over their io_seconds
  int ranks_with_data = 0;
  // The rank whose own I/O took longest (io_seconds; the lowest such rank on a tie), and its bytes
  // over the duration: never above `bandwidth`, whose bytes include its own.
  int slowest_rank = 0;
  double slowest_rank_seconds = 0;   // its io_seconds
  std::uint64_t slowest_rank_file_bytes = 0;
  double slowest_rank_bandwidth = 0;  // slowest_rank_file_bytes / duration
  std::uint64_t storage_read_bytes = 0;  // loads: from storage, all ranks (/proc/self/io)
  bool storage_read_known = false;
  AsyncSaveSummary async;  // checkpoint.async saves: the stall (the figures above are the flush's)
  ReshardSummary reshard;  // loads on another layout than the save's
  IoRecorder io;
};

// How long the ranks took from their processes' start to their first read of checkpoint data
// (MLPerf's failover: a read job started after a write job), from RankRecord::process_start_ns and
// the first load's CheckpointTimeline::first_read_end_ns.
struct StartupSummary {
  bool known = false;                       // every rank's process start is known
  std::int64_t first_process_start_us = 0;  // the earliest rank's, wall-clock microseconds
  int ranks_loaded = 0;                     // ranks that read checkpoint data in a load (not all hold a shard)
  double first_read_max = 0, first_read_min = 0;  // over those, seconds from a rank's start to its first read
  int first_read_slowest_rank = 0;          // the rank of first_read_max (the lowest on a tie)
};

struct RunSummary {
  bool stopped_by_time_limit = false;
  // A signal stopped the run: which, and the epoch and phase (RankRecord's, agreed). 0: complete.
  int stop_signal = 0;
  std::uint64_t stop_epoch = 0;
  std::string stop_phase;
  int ranks = 1;
  int hosts = 1;
  // The cores the ranks may run on: each rank's share of its CPU binding (engine::RankCores),
  // summed. The client-capacity estimate's supply (metrics/client_capacity.hpp); 0: unknown.
  double client_cores = 0;
  std::string start, end;
  StartupSummary startup;
  GenerateSummary generate;
  // cache.staging before_first_epoch: what the ranks copied into the tiers (all ranks), and the
  // slowest rank's time.
  TierStats staging;
  double staging_seconds = 0;
  // Rank 0's only (RunSummarizer): the other ranks write no report and keep none.
  std::vector<EpochSummary> epochs;
  std::vector<CheckpointSummary> checkpoints;
  // Every storage call of the run (generation, training, evaluation, checkpoints) together.
  IoRecorder io;
  // Every epoch's training together: its per-step and per-sample latencies.
  Histogram train_wait_ns, train_sample_ns, train_compute_ns, train_barrier_ns;
};

// The run's figures, summarised phase by phase as each ends, so that no rank holds a phase's
// measurements past its end. Collective: every rank adds each epoch and checkpoint as it ends
// and gets the same figures for it, but for those built from every rank's own (the straggler
// view, the hosts, the common access sizes), which only rank 0 receives. What stays of a phase is its figures: latencies keep the
// quantiles the reports print, and only rank 0, which writes the reports, keeps every epoch and
// checkpoint; the other ranks keep the run's totals.
// Where each phase's per-rank figures go on rank 0 before its summary drops them.
class RankRows {
 public:
  virtual ~RankRows() = default;
  virtual void add(std::uint64_t epoch, const char* phase, const PhaseSummary& p) = 0;
};

class RunSummarizer {
 public:
  // `rows`: rank 0's destination of every phase's per-rank figures (none: they are dropped).
  explicit RunSummarizer(const mpi::Comm& comm, RankRows* rows = nullptr) : comm_(comm), rows_(rows) {}
  const EpochSummary& add(const EpochRecord& mine);
  const CheckpointSummary& add(const CheckpointRecord& mine);
  // checkpoint.async: every epoch's summary also splits its training steps by flush (collective).
  void track_flush_overlap() { flush_overlap_ = true; }
  // The whole run, with its generation and staging.
  RunSummary finish(const RankRecord& mine);

 private:
  const mpi::Comm& comm_;
  RankRows* rows_;
  RunSummary run_;
  bool flush_overlap_ = false;
};

// Collective: every rank calls it with its own record; every rank gets the same summary, but for
// the per-rank figures (rank 0's only, as in RunSummarizer).
EpochSummary summarize_epoch(const EpochRecord& mine, const mpi::Comm& comm);
CheckpointSummary summarize_checkpoint(const CheckpointRecord& mine, const mpi::Comm& comm);
StartupSummary summarize_startup(const RankRecord& mine, const mpi::Comm& comm);

// Whether a phase was served (mostly) by the page cache: its page-cache verdict says so
// (metrics/page_cache.hpp).
bool served_from_cache(const PhaseSummary& p);

// Mean and population standard deviation (numpy.std) of a list.
double mean_of(const std::vector<double>& v);
double stdev_of(const std::vector<double>& v);

}  // namespace trainio::metrics
