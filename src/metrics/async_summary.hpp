#pragma once
// The figures of asynchronous checkpoints (checkpoint.async, docs/checkpoints.md) across ranks:
// per save the training stall, and per epoch how the training steps fared while a flush ran
// against those when none did.

#include <cstdint>
#include <optional>

#include "metrics/run_record.hpp"
#include "mpi/comm.hpp"

namespace trainio::metrics {

// One save's stall across ranks: the largest of each part (every step waits for the slowest rank).
struct AsyncSaveSummary {
  bool on = false;
  double stall = 0, slot_wait = 0, snapshot = 0;  // seconds, each the largest over the ranks
  std::uint64_t buffer_bytes = 0;                 // the largest host buffer of a rank
};

// Training steps on one side (a flush running, or not), across ranks: each rank's AU over its
// steps on that side, 100 * sum(compute) / sum(load + compute + barrier), averaged over the ranks
// that had such steps, and its delivered read bandwidth, sample bytes / sum(step time), summed.
struct StepSide {
  std::uint64_t steps = 0, sample_bytes = 0;
  int ranks = 0;
  std::optional<double> au_percent, read_bytes_per_second;
};

struct FlushOverlapSummary {
  StepSide during, without;
  // during / without of the read bandwidth (below 1: reads slowed while flushing); null without both.
  std::optional<double> read_ratio;
};

// Collective.
AsyncSaveSummary summarize_async_save(const CheckpointTimeline& mine, const mpi::Comm& comm);
FlushOverlapSummary summarize_flush_overlap(const ReadPhase& mine, const mpi::Comm& comm);

}  // namespace trainio::metrics
