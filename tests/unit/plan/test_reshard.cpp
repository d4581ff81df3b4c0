#include <catch2/catch.hpp>

#include <map>

#include "config/load.hpp"
#include "plan/reshard.hpp"
#include "util/error.hpp"
#include "unit/plan/tiny_model.hpp"

using namespace trainio;
using namespace trainio::plan;

namespace {

config::Workload workload(const std::vector<std::string>& overrides) { return test::checkpoint_workload(overrides, 1); }
using test::tiny;

std::uint64_t piece_bytes(const ReshardReads& r) {
  std::uint64_t n = 0;
  for (const auto& f : r.files)
    for (const auto& p : f.pieces) n += p.bytes;
  return n;
}

}  // namespace

TEST_CASE("tensor parallelism 2 to 1: a matrix comes from both halves, a norm from one copy") {
  const auto w = workload(tiny({"model.parallelism.tensor=2", "checkpoint.load_parallelism.tensor=1"}));
  const ReshardPlan plan(w, saved_layout(w, 2), load_layout(w, 1, 2));
  const ReshardReads r = plan.reads_of(0);
  // ZeRO 0: the two model files, then the two optimizer files.
  REQUIRE(r.files.size() == 4);
  CHECK(r.files[0].file.name == "zero_pp_rank_0_mp_rank_0_model_states.pt");
  CHECK(r.files[1].file.name == "zero_pp_rank_0_mp_rank_1_model_states.pt");
  CHECK(r.files[2].file.name == "zero_pp_rank_0_mp_rank_0_optim_states.pt");
  CHECK(r.files[3].file.name == "zero_pp_rank_0_mp_rank_1_optim_states.pt");
  // Layer 0 (embedding, 80 fp16 elements): 40 from each half, key 0 of each file.
  const auto& first = r.files[0].pieces;
  CHECK(first[0].tensor == 0);
  CHECK(first[0].first_byte == 0);
  CHECK(first[0].bytes == 80);
  CHECK(r.files[1].pieces[0].tensor == 0);
  CHECK(r.files[1].pieces[0].bytes == 80);
  // Layer 1's first norm (8 elements, whole on both tp ranks): read once, from tp 0's file (key 1).
  CHECK(first[1].tensor == 1);
  CHECK(first[1].bytes == 16);
  // Its qkv matrix (8 x 16 = 128 elements): 64 from each file, key 2.
  CHECK(first[2].tensor == 2);
  CHECK(first[2].bytes == 128);
  CHECK(r.files[1].pieces[1].tensor == 2);  // tp 1's file: no norm read from it
  // Model: the whole 1352 parameters in fp16; optimizer 3 x 1352 fp32 + 3 x 40 small, all saved.
  CHECK(r.shard_bytes == 1352 * 2 + 3 * 1352 * 4 + 3 * 40 * 4);
  CHECK(r.unsaved_bytes == 0);
  CHECK(piece_bytes(r) == r.shard_bytes);
}

TEST_CASE("ZeRO-3 on 4 ranks loaded on 2: each rank's shard is its own in the 2-rank layout") {
  const auto w4 = workload(tiny({"model.parallelism.zero_stage=3"}));
  const ReshardPlan plan(w4, saved_layout(w4, 4), load_layout(w4, 2, 4));
  const auto w2 = workload(tiny({"model.parallelism.zero_stage=3"}));
  const CheckpointPlan two(w2, 2);
  for (int rank = 0; rank < 2; ++rank) {
    const ReshardReads r = plan.reads_of(rank);
    std::uint64_t own = 0;
    for (const auto& f : two.files_of(rank)) own += f.tensor_bytes;
    // The optimizer's P / 2 = 676 per group, of which 4 x 338 were saved: nothing left out.
    CHECK(r.shard_bytes == own);
    CHECK(piece_bytes(r) + r.unsaved_bytes == r.shard_bytes);
    // Rank 0 reads saved ranks 0 and 1, rank 1 saved ranks 2 and 3 (model and optimizer files).
    std::map<int, int> by_rank;
    for (const auto& f : r.files) ++by_rank[f.saved_rank];
    CHECK(by_rank.size() == 2);
    CHECK(by_rank.begin()->first == 2 * rank);
  }
}

TEST_CASE("pipeline 2 to 1 with ZeRO 1 reads the per-layer files of both stages") {
  const auto w = workload(tiny({"model.parallelism.pipeline=2", "model.parallelism.zero_stage=1"}));
  const ReshardPlan plan(w, saved_layout(w, 2), load_layout(w, 2, 2));
  // Load: tensor 1, pipeline 2 is the save's own layout; force pipeline 1 through the key.
  const auto w1 = workload(tiny({"model.parallelism.pipeline=2", "model.parallelism.zero_stage=1",
                                 "checkpoint.load_parallelism.pipeline=1"}));
  const ReshardPlan flat(w1, saved_layout(w1, 2), load_layout(w1, 1, 2));
  const ReshardReads r = flat.reads_of(0);
  std::vector<std::string> model_files;
  for (const auto& f : r.files)
    if (f.file.name.find("layer_") == 0) model_files.push_back(f.file.name);
  // Stage 0 held layers 0 and 1, stage 1 layers 2, 3 and 4 (lm_head, final norm).
  CHECK(model_files == std::vector<std::string>{"layer_0-model_0_model_states.pt", "layer_1-model_0_model_states.pt",
                                                 "layer_2-model_1_model_states.pt", "layer_3-model_1_model_states.pt",
                                                 "layer_4-model_1_model_states.pt"});
  CHECK(r.unsaved_bytes == 0);
  CHECK(piece_bytes(r) == r.shard_bytes);
  CHECK(plan.saved() == plan.load());
}

TEST_CASE("impossible load layouts are config errors naming the key") {
  auto message = [](const std::vector<std::string>& o, int ranks, int saved) {
    try {
      const auto w = workload(tiny(o));
      load_layout(w, ranks, saved);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::config);
      return std::string(e.what()) + " | " + e.hint();
    }
    return std::string("no error");
  };
  CHECK_THAT(message({"checkpoint.load_parallelism.tensor=2"}, 3, 3),
             Catch::Contains("checkpoint.load_parallelism") && Catch::Contains("not a multiple"));
  CHECK_THAT(message({"checkpoint.load_parallelism.data=3"}, 2, 2), Catch::Contains("checkpoint.load_parallelism.data = 3"));
  CHECK_THAT(message({"checkpoint.load_parallelism.tensor=4"}, 4, 4), Catch::Contains("checkpoint.load_parallelism.tensor"));
  CHECK_THAT(message({"checkpoint.load_parallelism.pipeline=3"}, 3, 3),
             Catch::Contains("checkpoint.load_parallelism.pipeline") && Catch::Contains("model.num_layers"));
  CHECK_THAT(message({"checkpoint.recovery_rank_shift=True"}, 1, 2), Catch::Contains("checkpoint.recovery_rank_shift"));
  CHECK_THAT(message({"model.type=cnn", "checkpoint.load_parallelism.data=1"}, 1, 2),
             Catch::Contains("transformer"));
  CHECK(message({}, 2, 2) == "no error");  // the save's own layout: not a reshard
}
