// Raw checkpoint layouts (engine/checkpoint/raw_checkpoint.hpp): which files a rank writes, what they hold,
// and the buffer the writer needs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "config/load.hpp"
#include "engine/checkpoint/checkpointer.hpp"
#include "engine/checkpoint/raw_checkpoint.hpp"
#include "unit/temp_dir.hpp"

using namespace trainio;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMiB = 1 << 20;

// 3 int8 tensors of 3000, 5000 and 7000 bytes in one model file per rank (DLIO's legacy
// layer_parameters, one layer, every replica writing).
config::Workload three_tensors(const std::string& folder, const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"workflow.train=false", "workflow.generate_data=false", "workflow.checkpoint=true",
                                  "checkpoint.num_checkpoints_write=1", "checkpoint.checkpoint_folder=" + folder,
                                  "model.model_size_bytes=0", "model.num_layers=1",
                                  "model.layer_parameters=[3000,5000,7000]", "checkpoint.type=all_ranks",
                                  "checkpoint.randomize_tensor=false"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return config::load_text("framework: pytorch\n", "t.yaml", "t", all);
}

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("raw layouts name one file per tensor, in torch's storage order, or one file per rank") {
  plan::StateDict state;
  auto shared = std::make_shared<plan::StateDict>();
  shared->add("w", plan::TensorSpec{100, config::ModelDataType::fp16});
  state.add("0", shared);
  state.add("1", shared);  // the same dict again: torch.save stores its tensor once
  state.add("b", plan::TensorSpec{7, config::ModelDataType::fp32});
  const format::torch::Archive archive(state);
  const std::vector<std::pair<std::string, const format::torch::Archive*>> files = {{"model_states-3.pt", &archive}};

  const auto per_tensor = engine::raw_files(files, 3, config::CheckpointLayout::per_tensor);
  REQUIRE(per_tensor.size() == 2);
  CHECK(per_tensor[0].name == "model_states-3-0.bin");
  CHECK(per_tensor[0].bytes == 200);
  CHECK(per_tensor[1].name == "model_states-3-1.bin");
  CHECK(per_tensor[1].bytes == 28);

  const auto per_rank = engine::raw_files(files, 3, config::CheckpointLayout::per_rank);
  REQUIRE(per_rank.size() == 1);
  CHECK(per_rank[0].name == "rank_3.bin");
  CHECK(per_rank[0].bytes == 228);
  CHECK(per_rank[0].tensors.size() == 2);
  CHECK(engine::raw_files({}, 0, config::CheckpointLayout::per_rank).empty());  // a rank that writes nothing
}

TEST_CASE("the raw writer's buffer holds two pieces of whole write buffers") {
  CHECK(engine::raw_staging_bytes(64 * kMiB, 10 * 1024 * kMiB) == 2 * 64 * kMiB);
  // Small calls: pieces of whole buffers near 8 MiB, so generating is not handed over per call.
  CHECK(engine::raw_staging_bytes(6144, 1024 * kMiB) == 2 * (8 * kMiB / 6144 * 6144));
  // A small file needs no more than itself, in whole buffers.
  CHECK(engine::raw_staging_bytes(64 * kMiB, 12 * kMiB) == 2 * 64 * kMiB);
  CHECK(engine::raw_staging_bytes(6144, 10000) == 2 * 12288);
  CHECK(engine::raw_staging_bytes(4096, 0) == 2 * 4096);
}

TEST_CASE("a per_tensor save writes each tensor's bytes in a file of its own; per_rank all in one") {
  for (const bool direct : {false, true}) {
    INFO("checkpoint.odirect=" << direct);
    test::TempDir dir("raw-checkpoint");
    const mpi::Comm comm = mpi::Comm::solo();
    const std::string buffer = direct ? "checkpoint.write_buffer_bytes=4096" : "checkpoint.write_buffer_bytes=1000";
    const std::string odirect = direct ? "checkpoint.odirect=true" : "checkpoint.odirect=false";
    {
      const config::Workload w = three_tensors(dir / "t", {"checkpoint.file_layout=per_tensor", buffer, odirect});
      engine::Checkpointer ck(w, comm, 1);  // keeps a reference to the workload
      const auto rec = ck.save(1, 1, 1);
      const fs::path folder = fs::path(dir / "t") / rec.folder;
      REQUIRE(names_in(folder) == std::vector<std::string>{"zero_pp_rank_0_mp_rank_0_model_states-0.bin",
                                                           "zero_pp_rank_0_mp_rank_0_model_states-1.bin",
                                                           "zero_pp_rank_0_mp_rank_0_model_states-2.bin"});
      // torch.ones of int8: every byte 1, nothing else in the file.
      CHECK(bytes_of(folder / "zero_pp_rank_0_mp_rank_0_model_states-0.bin") == std::string(3000, '\x01'));
      CHECK(bytes_of(folder / "zero_pp_rank_0_mp_rank_0_model_states-2.bin") == std::string(7000, '\x01'));
      CHECK(rec.files == 3);
      CHECK(rec.file_bytes == 15000);
      CHECK(rec.tensor_bytes == 15000);
      CHECK(ck.own_file_bytes() == 15000);
    }
    {
      const config::Workload w = three_tensors(dir / "r", {"checkpoint.file_layout=per_rank", buffer, odirect});
      engine::Checkpointer ck(w, comm, 1);
      const auto rec = ck.save(1, 1, 1);
      const fs::path folder = fs::path(dir / "r") / rec.folder;
      REQUIRE(names_in(folder) == std::vector<std::string>{"rank_0.bin"});
      CHECK(bytes_of(folder / "rank_0.bin") == std::string(15000, '\x01'));
      CHECK(rec.files == 1);
      CHECK(rec.file_bytes == 15000);
    }
  }
}

TEST_CASE("random raw content is new for every checkpoint and spans tensor boundaries unbroken") {
  test::TempDir dir("raw-random");
  const mpi::Comm comm = mpi::Comm::solo();
  const config::Workload w = three_tensors(dir / "r", {"checkpoint.file_layout=per_rank", "checkpoint.randomize_tensor=true",
                                                       "checkpoint.write_buffer_bytes=777"});
  engine::Checkpointer ck(w, comm, 1);
  const auto first = ck.save(1, 1, 1);
  const auto second = ck.save(1, 2, 2);
  const std::string a = bytes_of(fs::path(dir / "r") / first.folder / "rank_0.bin");
  const std::string b = bytes_of(fs::path(dir / "r") / second.folder / "rank_0.bin");
  REQUIRE(a.size() == 15000);
  REQUIRE(b.size() == 15000);
  CHECK(a != b);
  CHECK(a.find(std::string(64, '\0')) == std::string::npos);  // no unwritten hole
}
