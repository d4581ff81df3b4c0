#include <catch2/catch.hpp>

#include "config/load.hpp"
#include "plan/checkpoint_plan.hpp"
#include "util/error.hpp"
#include "unit/plan/tiny_model.hpp"

using namespace trainio;
using namespace trainio::plan;

namespace {

config::Workload checkpointing(const std::vector<std::string>& overrides) {
  return test::checkpoint_workload(overrides);
}
using test::tiny;

std::vector<std::pair<std::string, std::uint64_t>> names_and_bytes(const CheckpointPlan& p, int rank) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (const auto& f : p.files_of(rank)) out.emplace_back(f.name, f.tensor_bytes);
  return out;
}

}  // namespace

TEST_CASE("transformer parameters follow DLIO's count") {
  CHECK(transformer_parameters(checkpointing(tiny({})).model) == 1352);
  const auto llama8b =
      checkpointing({"model.type=transformer", "model.num_layers=32", "model.transformer.vocab_size=128256",
                     "model.transformer.hidden_size=4096", "model.transformer.ffn_hidden_size=14336",
                     "model.transformer.num_attention_heads=32", "model.transformer.num_kv_heads=8"});
  CHECK(transformer_parameters(llama8b.model) == 8030261248ull);
}

TEST_CASE("ZeRO 1 with two pipeline stages: layer files on dp 0, optimizer shards everywhere") {
  const auto w = checkpointing(tiny({"model.parallelism.pipeline=2", "model.parallelism.zero_stage=1"}));
  const CheckpointPlan p(w, 4);  // DP 2
  using V = std::vector<std::pair<std::string, std::uint64_t>>;
  // Optimizer: 3 x 1352 / 4 + 3 x 5 x 8 = 1134 fp32 elements.
  CHECK(names_and_bytes(p, 0) == V{{"layer_0-model_0_model_states.pt", 160}, {"layer_1-model_0_model_states.pt", 1184},
                                   {"zero_pp_rank_0_mp_rank_0_optim_states.pt", 4536}});
  CHECK(names_and_bytes(p, 1) == V{{"layer_2-model_1_model_states.pt", 1184}, {"layer_3-model_1_model_states.pt", 160},
                                   {"layer_4-model_1_model_states.pt", 16},
                                   {"zero_pp_rank_0_mp_rank_1_optim_states.pt", 4536}});
  CHECK(names_and_bytes(p, 2) == V{{"zero_pp_rank_1_mp_rank_0_optim_states.pt", 4536}});
  CHECK(names_and_bytes(p, 3) == V{{"zero_pp_rank_1_mp_rank_1_optim_states.pt", 4536}});
  CHECK(p.total_bytes() == 160 + 1184 + 1184 + 160 + 16 + 4 * 4536);
  CHECK(p.writing_ranks() == 4);
}

TEST_CASE("ZeRO 1 without pipeline parallelism: one model file per tensor-parallel rank") {
  const auto w = checkpointing(tiny({"model.parallelism.tensor=2", "model.parallelism.zero_stage=1"}));
  const CheckpointPlan p(w, 4);
  const auto f = p.files_of(1);  // tp 1, dp 0
  REQUIRE(f.size() == 2);
  CHECK(f[0].name == "model_1_model_states.pt");
  // Matrices divide by TP, norms do not: embedding 40, per layer 8 + 64 + 32 + 8 + 128 + 64 = 304,
  // lm_head 40, norm 8 -> 696 fp16 elements.
  CHECK(f[0].tensor_bytes == 2 * 696);
  CHECK(f[0].state.items.size() == 5);  // layers 0..4, each a dict of tensors
  CHECK(p.files_of(3).size() == 1);     // dp 1: optimizer only
}

TEST_CASE("ZeRO 3 shards every tensor by data parallelism, ZeRO 0 leaves replicas idle") {
  const CheckpointPlan z3(checkpointing(tiny({"model.parallelism.zero_stage=3"})), 2);
  const auto f = z3.files_of(1);
  REQUIRE(f.size() == 2);
  CHECK(f[0].name == "zero_pp_rank_1_mp_rank_0_model_states.pt");
  CHECK(f[0].tensor_bytes == 2 * (40 + 2 * (4 + 64 + 32 + 4 + 128 + 64) + 40 + 4));
  CHECK(f[1].name == "zero_pp_rank_1_mp_rank_0_optim_states.pt");

  const CheckpointPlan z0(checkpointing(tiny({"model.parallelism.tensor=2"})), 4);
  CHECK(z0.files_of(0).size() == 2);
  CHECK(z0.files_of(1).size() == 2);
  CHECK(z0.files_of(2).empty());
  CHECK(z0.files_of(3).empty());
  CHECK(z0.writing_ranks() == 2);
  // The optimizer is not sharded by data parallelism: 3 x 1352 / 2 + 120 elements.
  CHECK(z0.files_of(0)[1].tensor_bytes == 4 * (3 * 676 + 120));
  const CheckpointPlan all(checkpointing(tiny({"model.parallelism.tensor=2", "checkpoint.type=all_ranks"})), 4);
  CHECK(all.writing_ranks() == 4);
  CHECK(all.files_of(3)[0].name == "zero_pp_rank_1_mp_rank_1_model_states.pt");
}

TEST_CASE("llama3-8B on 8 ranks: DLIO's 105 GB") {
  const auto w = checkpointing({"model.type=transformer", "model.num_layers=32", "model.transformer.vocab_size=128256",
                                "model.transformer.hidden_size=4096", "model.transformer.ffn_hidden_size=14336",
                                "model.transformer.num_attention_heads=32", "model.transformer.num_kv_heads=8",
                                "model.parallelism.zero_stage=3"});
  const CheckpointPlan p(w, 8);
  for (int r = 0; r < 8; ++r) {
    const auto f = p.files_of(r);
    REQUIRE(f.size() == 2);
    CHECK(f[0].tensor_bytes == 2007565312ull);   // 1,003,782,656 fp16 parameters
    CHECK(f[1].tensor_bytes == 12045637632ull);  // 3 x 1,003,782,656 + 61,440 fp32 elements
  }
  CHECK(p.total_bytes() == 112425623552ull);  // 104.7 GiB
}

TEST_CASE("the legacy model: rank 0 writes model_size_bytes, or every rank with all_ranks") {
  const CheckpointPlan p(checkpointing({}), 3);
  REQUIRE(p.files_of(0).size() == 1);
  CHECK(p.files_of(0)[0].name == "model_states-0.pt");
  CHECK(p.files_of(0)[0].tensor_bytes == 10240);
  CHECK(p.files_of(1).empty());
  const CheckpointPlan all(checkpointing({"checkpoint.type=all_ranks", "model.optimization_groups=[100,0,50]"}), 3);
  const auto f = all.files_of(2);
  REQUIRE(f.size() == 2);
  CHECK(f[0].name == "model_states-2.pt");
  CHECK(f[1].tensor_bytes == 2 * 100 + 2 * 50 + 150);  // {'a','b'} per group and the combined tensor
}

TEST_CASE("legacy layer_parameters share one dict per stage, stored once in a single file") {
  const auto w = checkpointing({"model.num_layers=4", "model.layer_parameters=[100,20]",
                                "model.parallelism.zero_stage=1", "model.model_size_bytes=0"});
  const CheckpointPlan p(w, 1);
  const auto f = p.files_of(0);
  REQUIRE(f.size() == 1);  // no optimizer groups: model only
  CHECK(f[0].name == "model_0_model_states.pt");
  CHECK(f[0].state.items.size() == 4);
  CHECK(f[0].tensor_bytes == 120);
}

TEST_CASE("a rank count that does not fit the layout is a config error naming the fix") {
  CHECK_THROWS_WITH(CheckpointPlan(checkpointing(tiny({"model.parallelism.tensor=4"})), 6),
                    Catch::Contains("6 ranks are not a multiple of tensor x pipeline"));
  CHECK_THROWS_WITH(CheckpointPlan(checkpointing(tiny({"model.parallelism.data=4"})), 2),
                    Catch::Contains("needs 4 ranks and the run has 2"));
  const CheckpointPlan subset(
      checkpointing(tiny({"model.parallelism.data=4", "checkpoint.mode=subset", "model.parallelism.zero_stage=3"})), 2);
  CHECK(subset.subset());
  CHECK(subset.data_parallelism() == 4);
}
