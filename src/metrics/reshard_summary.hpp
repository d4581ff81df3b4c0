#pragma once
// A load on another layout than the save's, across ranks (docs/checkpoints.md, "Restart on another
// layout"): what the ranks read against the state they hold, and how many ranks read each file.

#include <cstdint>
#include <string>

#include "metrics/run_record.hpp"
#include "mpi/comm.hpp"

namespace trainio::metrics {

struct ReshardSummary {
  bool on = false;
  ReshardLoad::Layout saved, load;
  int ranks = 0;                  // ranks that hold state in the load's layout
  std::uint64_t shard_bytes = 0;  // all ranks: the state they hold
  std::uint64_t unsaved_bytes = 0;
  std::uint64_t data_bytes = 0, index_bytes = 0, pieces = 0;
  // (data + index bytes) / shard bytes, all ranks; and the largest of a rank's own.
  double read_amplification = 0;
  double rank_read_amplification_max = 0;
  int rank_read_amplification_max_rank = 0;  // the lowest rank on a tie
  // Over the saved files read: how many ranks read each (rank 0's view; 0 elsewhere).
  std::uint64_t files_read = 0;
  std::uint64_t readers_per_file_max = 0, readers_per_file_min = 0;
  double readers_per_file_mean = 0;  // sum over files of their readers / files_read
  std::string most_read_file;        // the first file (by name) with readers_per_file_max
};

// Collective (every rank calls it for every load).
ReshardSummary summarize_reshard(const CheckpointTimeline& mine, const mpi::Comm& comm);

// A rank's own read amplification: (data + index bytes) / shard bytes (0 without a shard).
double read_amplification(const ReshardLoad& r);

}  // namespace trainio::metrics
