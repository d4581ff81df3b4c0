#pragma once
// What one rank measured during a run, phase by phase. The engine fills it; aggregate() turns
// the records of all ranks into the run's figures.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "metrics/block_stats.hpp"
#include "metrics/histogram.hpp"
#include "metrics/io_recorder.hpp"
#include "metrics/step_log.hpp"
#include "metrics/tier_stats.hpp"
#include "util/host_cpu.hpp"
#include "util/proc_stats.hpp"

namespace trainio::metrics {

// DLIO's block: a run of training steps that a checkpoint ends (or the epoch does), with DLIO's
// AU and throughput over it (the first exclude_start_steps of every block left out).
struct DlioBlock {
  std::string start, end;    // wall time, ISO 8601
  std::int64_t start_ns = 0, end_ns = 0;  // the same on the monotonic clock
  std::uint64_t steps = 0;
  std::optional<double> au;          // a fraction; absent: no value (see BlockResult)
  std::optional<double> throughput;  // samples/s, DLIO's formula; absent: no value
};

// What a rank keeps of a read phase (one epoch's training, or one evaluation) for the whole
// run: its times and DLIO's figures per block, which DLIO's per-rank files list.
struct PhaseTimeline {
  std::string start, end;    // wall time, ISO 8601 (local, as DLIO writes it)
  // The whole phase, checkpoint time left out. Its `au` and `throughput_dlio` are DLIO's epoch
  // values: the step-weighted mean over `blocks` (the same thing when there is one block).
  BlockResult block;
  std::vector<DlioBlock> blocks;
  // The phase's steps in the run's step log (RankRecord::steps): [first_step, first_step + steps_logged).
  std::uint64_t first_step = 0, steps_logged = 0;
};

// A read phase as it ends: its timeline and all it measured. The measurements are summarised
// across the ranks as the epoch ends (metrics::RunSummarizer), then dropped: the run keeps the
// timeline only, so that a rank's memory does not grow by a phase's histograms every epoch.
struct ReadPhase : PhaseTimeline {
  Histogram wait_ns;         // per step: time the training loop waited for its batch
  Histogram compute_ns;      // per step: the emulated compute
  Histogram barrier_ns;      // per step: waiting for the other ranks after compute
  Histogram sample_ns;       // per sample: time to read it (reader threads)
  IoRecorder io;             // every storage call of the phase
  TierStats tier;            // what the cache tier did (cache.tier set)
  // What the training loop consumed: the batches it took, not those the readers fetched ahead.
  std::uint64_t samples = 0;
  std::uint64_t sample_bytes = 0;  // bytes of sample data delivered to the application
  // The storage side, where Linux tells: bytes this process made the kernel fetch from storage
  // (/proc/self/io), and bytes read from the data folder's block device (counted by one rank per
  // node, since the device is shared). Absent values stay 0 with *_known false.
  std::uint64_t storage_read_bytes = 0;
  bool storage_read_known = false;
  std::uint64_t device_read_bytes = 0;
  bool device_read_known = false;
  double cpu_user = 0, cpu_sys = 0;  // CPU seconds this process (all its threads) used in the phase
  double cpu_polling = 0;  // of which the training loop polled for its next batch (engine/load/batch_wait.hpp)
  // The loader's reads (engine/load/batch_pipeline.hpp's ReadStats), for the bottleneck verdict:
  // absent where the loader does not measure them (tf.data's stages).
  struct Readers {
    std::uint64_t threads = 0, max_in_flight = 0;
    std::int64_t busy_ns = 0, cpu_ns = 0, at_max_ns = 0;
    std::int64_t run_delay_ns = -1;  // runnable, waiting for a CPU (schedstat); -1: not known
  };
  std::optional<Readers> readers;
  // The host's CPU ticks before and after the phase (/proc/stat; machine-wide).
  std::optional<util::HostCpu> host_cpu_before, host_cpu_after;
  // The readings these figures come from, which the rank's records keep (report/records_file.hpp):
  // the window on the monotonic clock (its duration: end - start - paused, the checkpoints between
  // its steps), the kernel's counters before and after it, and the process's CPU times before and
  // after it and in the checkpoints taken inside it.
  std::int64_t window_start_ns = 0, window_end_ns = 0, paused_ns = 0;
  std::optional<std::uint64_t> process_read_before, process_read_after, device_read_before, device_read_after;
  util::CpuTimes cpu_before, cpu_after, cpu_in_checkpoints;
  // checkpoint.async: the steps during which a background flush ran, as ranges [first, end) of the
  // run's step log; and over those steps (`flush_on`) and the others (`flush_off`) the sums of
  // their logged times (compute; load + compute + barrier) and the sample bytes they delivered.
  struct StepSums {
    std::uint64_t steps = 0, sample_bytes = 0;
    double compute = 0, time = 0;
  };
  std::vector<std::pair<std::uint64_t, std::uint64_t>> flush_steps;
  StepSums flush_on, flush_off;
};

// An epoch's training and evaluation: EpochRecord as it ends, EpochTimeline as the run keeps it.
template <typename Phase>
struct Epoch {
  std::uint64_t epoch = 0;  // 1-based
  std::string start, end;   // wall time, ISO 8601
  // /proc/meminfo as the epoch started, which DLIO keeps per epoch in <rank>_output.json.
  std::vector<std::pair<std::string, std::string>> host_meminfo;
  Phase train;
  bool evaluated = false;
  Phase eval;
};
using EpochRecord = Epoch<ReadPhase>;
using EpochTimeline = Epoch<PhaseTimeline>;

inline EpochTimeline timeline_of(const EpochRecord& e) {
  return {e.epoch, e.start, e.end, e.host_meminfo, e.train, e.evaluated, e.eval};
}

// An asynchronous save (checkpoint.async) as one rank took it, on the monotonic clock: training
// stopped at `stall_start_ns` for `slot_wait_ns` (a free in-flight slot: the oldest flush ending
// and the ranks agreeing on it) then `snapshot_ns` (the copy into the host buffer), and the writer
// thread flushed the shard from `flush_start_ns` to the end of its last call, `flush_end_ns`.
struct AsyncSave {
  bool on = false;
  std::int64_t stall_start_ns = 0, slot_wait_ns = 0, snapshot_ns = 0;
  std::int64_t flush_start_ns = 0, flush_end_ns = 0;
  std::uint64_t buffer_bytes = 0;  // the host buffer the snapshot went through
  double stall_seconds() const { return static_cast<double>(slot_wait_ns + snapshot_ns) * 1e-9; }
};

// A load on another parallel layout than the save's (engine/reshard_load.hpp), as one rank read it.
struct ReshardLoad {
  bool on = false;
  struct Layout {
    int tensor = 1, pipeline = 1, data = 1;
  } saved, load;
  std::uint64_t shard_bytes = 0;    // the state this rank holds in the load's layout
  std::uint64_t unsaved_bytes = 0;  // of it, elements no saved rank held
  std::uint64_t data_bytes = 0;     // tensor bytes read
  std::uint64_t index_bytes = 0;    // central directories, end records and local headers read
  std::uint64_t pieces = 0;         // ranges read
  std::vector<std::string> files;   // saved files read, in order
};

// What the run keeps of one checkpoint saved or loaded, as one rank did its part.
struct CheckpointTimeline {
  enum class Kind { save, load };
  Kind kind = Kind::save;
  std::uint64_t index = 0;  // 1-based, per kind, over the run
  std::uint64_t block = 0;  // DLIO's number for it: the block it ends in its epoch (save_ckpt<block>)
  std::uint64_t epoch = 0, step = 0;
  std::string folder;       // global_epoch<e>_step<s>
  std::string start, end;   // wall time, ISO 8601: end - start = seconds
  std::int64_t start_ns = 0;  // the start on the monotonic clock
  // This rank's own time, from its start to the end of its last call: DLIO's per-rank duration
  // (with checkpoint.rank_sync, as in DLIO, to the barrier after it).
  double seconds = 0;
  double io_seconds = 0;          // to the end of its last call, rank_sync or not
  double collective_seconds = 0;  // until the ranks agreed that all had succeeded (waiting for the others)
  std::uint64_t files = 0;
  std::uint64_t tensor_bytes = 0;  // this rank's share of the checkpoint
  std::uint64_t file_bytes = 0;    // with the archives' headers
  // Loads: bytes the kernel fetched from storage for this process (/proc/self/io), which shows
  // whether the page cache was really emptied.
  std::uint64_t storage_read_bytes = 0;
  bool storage_read_known = false;
  std::optional<std::uint64_t> process_read_before, process_read_after;  // the readings behind it
  // Loads: when this rank's first read of the checkpoint's data returned (monotonic; 0: none).
  std::int64_t first_read_end_ns = 0;
  AsyncSave async;  // checkpoint.async saves: the span above is the flush's
  ReshardLoad reshard;  // loads on another layout than the save's
};

// A checkpoint as it ends, with its storage calls (summarised, then dropped, as a read phase's).
struct CheckpointRecord : CheckpointTimeline {
  IoRecorder io;
};

struct GenerateRecord {
  bool ran = false;
  double seconds = 0;          // writing this rank's files, from the start to the last write
  double durable_seconds = 0;  // from the start until they were on stable storage (>= seconds)
  std::uint64_t files_written = 0;
  std::uint64_t files_kept = 0;  // already complete and matching
  IoRecorder io;
};

struct RankRecord {
  std::string start, end;
  // When the kernel started this rank's process (util::process_start_ns), if /proc says.
  std::optional<std::int64_t> process_start_ns;
  // Every step's times, for DLIO's per-rank lists; held outside memory on real runs.
  std::shared_ptr<StepLog> steps = std::make_shared<MemoryStepLog>();
  bool stopped_by_time_limit = false;  // train.max_seconds ended the run
  // A signal asked the run to stop (util/stop_request.hpp): which, and the epoch and phase it
  // stopped in ("train", "eval", "checkpoint"; stopped before it when that phase had not begun).
  // The same on every rank (agreed).
  int stop_signal = 0;
  std::uint64_t stop_epoch = 0;
  std::string stop_phase;
  GenerateRecord generate;
  // cache.staging before_first_epoch: what this rank copied into the tier, and how long it took.
  TierStats staging;
  double staging_seconds = 0;
  IoRecorder staging_io;
  std::vector<EpochTimeline> epochs;
  std::vector<CheckpointTimeline> checkpoints;  // in the order they happened
};

}  // namespace trainio::metrics
