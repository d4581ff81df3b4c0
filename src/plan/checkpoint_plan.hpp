#pragma once
// Which checkpoint files each rank writes, and what each holds, computed as DLIO's
// BaseCheckpointing lays them out (REFERENCE §6). Pure: no file is touched.
//
// Ranks form a grid of tensor x pipeline x data parallelism: tp = rank % TP,
// pp = (rank / TP) % PP, dp = rank / (TP x PP), mp = rank % (TP x PP). A transformer's layers are
// numbered 0 (embedding), 1..L (transformer layers), L+1 (lm_head), L+2 (final norm); pipeline
// stage s holds a contiguous run of them (stage 0 from layer 0, the last stage up to L+2).
// Tensor parallelism divides every matrix by TP; ZeRO-3 also divides every tensor by DP.
// Files of one checkpoint live in <checkpoint_folder>/global_epoch<e>_step<s>/:
//   model_states-<rank>.pt                        legacy model (model.model_size_bytes)
//   layer_<l>-model_<mp>_model_states.pt          ZeRO 1/2 with pipeline parallelism, dp 0 only
//   model_<mp>_model_states.pt                    ZeRO 1/2 without, dp 0 only
//   zero_pp_rank_<dp>_mp_rank_<mp>_model_states.pt ZeRO 0 and 3
//   zero_pp_rank_<dp>_mp_rank_<mp>_optim_states.pt optimizer state: 3 x P/(DP x MP) elements
//                                                  (P/MP with ZeRO 0) + 15 x hidden, in
//                                                  optimizer_datatype
// ZeRO 0 leaves the replicas (ranks >= TP x PP) idle, unless checkpoint.type is all_ranks.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/workload.hpp"
#include "plan/state_dict.hpp"

namespace trainio::plan {

struct CheckpointFile {
  std::string name;  // file name inside the checkpoint's folder
  StateDict state;
  std::uint64_t tensor_bytes = 0;
};

struct RankLayout {
  int tp = 0, pp = 0, dp = 0, mp = 0;
};

class CheckpointPlan {
 public:
  // Throws a config error when the rank count does not fit the parallel layout.
  CheckpointPlan(const config::Workload& w, int ranks);

  // The files `rank` writes in every checkpoint (empty for ranks that write nothing).
  std::vector<CheckpointFile> files_of(int rank) const;
  RankLayout layout_of(int rank) const;

  std::uint64_t parameters() const { return parameters_; }  // transformer parameters (0 otherwise)
  std::uint64_t total_bytes() const { return total_bytes_; }  // tensor bytes of one checkpoint, all ranks
  std::uint64_t model_bytes() const { return model_bytes_; }
  std::uint64_t optimizer_bytes() const { return optimizer_bytes_; }
  std::uint64_t max_rank_bytes() const { return max_rank_bytes_; }
  int writing_ranks() const { return writing_ranks_; }
  int tensor_parallelism() const { return tp_; }
  int pipeline_parallelism() const { return pp_; }
  int data_parallelism() const { return dp_; }
  bool subset() const { return subset_; }  // the ranks are part of a larger job's layout

  // "global_epoch<e>_step<s>", DLIO's folder of one checkpoint.
  static std::string folder_name(std::uint64_t epoch, std::uint64_t step);

 private:
  bool writes(int rank) const;
  std::pair<std::uint64_t, std::uint64_t> stage_layers(int pipeline_rank) const;
  std::vector<std::uint64_t> layer_tensors(std::uint64_t layer) const;
  std::vector<std::uint64_t> optimizer_groups() const;

  config::ModelSection model_;  // copies: a plan outlives the workload it was made from
  config::CheckpointType type_;
  int tp_, pp_, mp_, dp_;
  bool transformer_;
  bool subset_ = false;
  std::uint64_t parameters_ = 0;
  std::uint64_t total_bytes_ = 0, model_bytes_ = 0, optimizer_bytes_ = 0, max_rank_bytes_ = 0;
  int writing_ranks_ = 0;
};

// <storage_root>/<checkpoint_folder>, without a trailing slash.
std::string checkpoint_root(const config::Workload& w);

// DLIO's get_num_parameters(): embedding and lm_head 2 x vocab x hidden, per layer
// hidden x (hidden + 2 kv) + hidden^2 + 3 x ffn x hidden + 2 x hidden (kv = hidden / heads x
// kv_heads), and the final norm.
std::uint64_t transformer_parameters(const config::ModelSection& m);

// The layers [first, last] of pipeline stage `stage` of `pipeline` ({1, 0}: none).
std::pair<std::uint64_t, std::uint64_t> stage_layers(const config::ModelSection& m, int pipeline, int stage);
// Elements of each tensor of `layer` on one rank: matrices divided by `tp`, every tensor by
// `shard` (ZeRO-3's data parallelism; 1 otherwise). tp = shard = 1 gives the whole tensors.
std::vector<std::uint64_t> layer_tensor_elements(const config::ModelSection& m, std::uint64_t layer, std::uint64_t tp,
                                                 std::uint64_t shard);
// Whether tensor `index` of `layer` is divided by tensor parallelism (else every tp rank holds it whole).
bool tensor_parallel(const config::ModelSection& m, std::uint64_t layer, std::size_t index);

}  // namespace trainio::plan
