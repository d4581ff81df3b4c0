#pragma once
// A checkpoint loaded on another parallel layout than it was saved with (a failed node left out,
// a resized job): which byte ranges of which saved files each loading rank reads. Pure.
//
// The state a loading rank holds is the one its place in the new layout would save
// (CheckpointPlan's rules with the load's tensor x pipeline x data): its pipeline stage's layers,
// each matrix's 1/TP (ZeRO-3: and 1/DP of that), and its optimizer partition. Every element of a
// tensor has one place in the whole tensor, flattened: tensor-parallel rank t holds the t-th
// contiguous 1/TP (a split along the first dimension), ZeRO-3 data rank d the d-th 1/DP of that.
// Tensors not split by TP (norms) are whole on every tp rank; a loading rank reads the copy of
// saved tp rank (its tp mod the saved TP). The optimizer state is DLIO's: three flat groups of
// P/(DP x MP) elements per rank (P/MP with ZeRO 0), ordered by (mp, dp); a loading rank reads its
// P/(DP' x MP') of that order, and the small per-rank groups from the saved file it reads first.
// Every loading rank reads its state, ZeRO 0 replicas and ZeRO 1/2 model weights included (as
// DeepSpeed's load does on every rank).

#include <cstdint>
#include <string>
#include <vector>

#include "config/workload.hpp"
#include "plan/checkpoint_plan.hpp"

namespace trainio::plan {

struct ParallelLayout {
  int tensor = 1, pipeline = 1, data = 1;
  int ranks() const { return tensor * pipeline * data; }
  bool operator==(const ParallelLayout&) const = default;
};

// The ranks of the job whose checkpoints a run loads: its own when it saves any (or trains), else
// those of the job it resumes from (`previous_ranks`, 0 when unknown: the run's own).
int saved_rank_count(const config::Workload& w, int ranks, int previous_ranks);

// The save's layout: model.parallelism, data = saved_ranks / (tensor x pipeline).
ParallelLayout saved_layout(const config::Workload& w, int saved_ranks);
// The load's: checkpoint.load_parallelism on `ranks` ranks. Throws a config error naming the key
// for a layout that does not fit the ranks or the model, or a reshard trainio cannot replay.
ParallelLayout load_layout(const config::Workload& w, int ranks, int saved_ranks);

// One range of a saved tensor's data.
struct ReshardPiece {
  std::size_t tensor = 0;        // the tensor's storage key in its file (0, 1, ... as the pickle names them)
  std::uint64_t first_byte = 0;  // from the start of the tensor's data
  std::uint64_t bytes = 0;
};

struct ReshardFile {
  int saved_rank = 0;
  CheckpointFile file;  // name and what it holds (for the archive's layout)
  std::vector<ReshardPiece> pieces;  // in the order the rank needs them
};

struct ReshardReads {
  std::vector<ReshardFile> files;  // in the order the rank first needs them
  std::uint64_t shard_bytes = 0;   // the state this rank holds in the new layout
  std::uint64_t unsaved_bytes = 0;  // of it, elements no saved rank held (DLIO's integer divisions)
};

class ReshardPlan {
 public:
  ReshardPlan(const config::Workload& w, ParallelLayout saved, ParallelLayout load);
  ReshardReads reads_of(int rank) const;
  const ParallelLayout& saved() const { return saved_; }
  const ParallelLayout& load() const { return load_; }

 private:
  struct Need;
  void model_reads(int rank, ReshardReads& out) const;
  void optimizer_reads(int rank, ReshardReads& out) const;
  void add(ReshardReads& out, int saved_rank, const std::string& name, ReshardPiece piece) const;
  int saved_stage_of(std::uint64_t layer) const;
  std::size_t model_key(int stage, std::uint64_t layer, std::size_t index, bool own_file) const;

  config::ModelSection model_;
  config::CheckpointType type_;
  ParallelLayout saved_, load_;
  CheckpointPlan saved_plan_;
  std::uint64_t parameters_ = 0;
};

}  // namespace trainio::plan
