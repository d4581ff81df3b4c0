#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "config/load.hpp"
#include "engine/checkpoint/checkpointer.hpp"
#include "storage/fs.hpp"
#include "unit/temp_dir.hpp"
#include "util/error.hpp"

using namespace trainio;
namespace fs = std::filesystem;

namespace {

// A 2-layer transformer of 5.5 M parameters, checkpointed into `folder`.
config::Workload tiny_model(const std::string& folder, const std::vector<std::string>& overrides = {}) {
  std::vector<std::string> all = {"model.type=transformer", "model.num_layers=2", "model.transformer.hidden_size=512",
                                  "model.transformer.num_attention_heads=8", "model.transformer.num_kv_heads=2",
                                  "model.transformer.ffn_hidden_size=1024", "model.transformer.vocab_size=1000",
                                  "workflow.train=false", "workflow.generate_data=false", "workflow.checkpoint=true",
                                  "checkpoint.num_checkpoints_write=1", "checkpoint.num_checkpoints_read=1",
                                  "checkpoint.checkpoint_folder=" + folder};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return config::load_text("framework: pytorch\n", "t.yaml", "t", all);
}

std::vector<std::string> files_under(const std::string& root) {
  std::vector<std::string> out;
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), root).string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("a checkpoint saves every file the plan gives this rank, and loads them back", "[checkpointer]") {
  test::TempDir dir("checkpointer");
  const config::Workload w = tiny_model(dir / "ck");
  const mpi::Comm comm = mpi::Comm::solo();
  engine::Checkpointer ck(w, comm, 1);
  const metrics::CheckpointRecord saved = ck.save(1, 10, 1);
  const std::vector<std::string> files = files_under(dir / "ck");
  CHECK(saved.files == files.size());
  CHECK(saved.files >= 2);  // the model and the optimizer states at least
  std::uint64_t on_disk = 0;
  for (const auto& f : files) {
    CHECK(f.rfind(saved.folder + "/", 0) == 0);  // all in global_epoch1_step10/
    CHECK(f.find(".trainio-tmp") == std::string::npos);
    on_disk += fs::file_size(fs::path(dir / "ck") / f);
  }
  CHECK(saved.file_bytes == on_disk);
  CHECK(saved.tensor_bytes < saved.file_bytes);  // the archives' headers come on top

  const metrics::CheckpointRecord loaded = ck.load(1, 10, 1);
  CHECK(loaded.files == saved.files);
  CHECK(loaded.tensor_bytes == saved.tensor_bytes);
}

TEST_CASE("loading a checkpoint cut short is a dataset error naming the file", "[checkpointer]") {
  test::TempDir dir("checkpointer-short");
  const config::Workload w = tiny_model(dir / "ck");
  const mpi::Comm comm = mpi::Comm::solo();
  engine::Checkpointer ck(w, comm, 1);
  ck.save(1, 10, 1);
  const std::vector<std::string> files = files_under(dir / "ck");
  REQUIRE_FALSE(files.empty());
  const fs::path victim = fs::path(dir / "ck") / files.front();
  fs::resize_file(victim, fs::file_size(victim) / 2);
  try {
    ck.load(1, 10, 1);
    FAIL("a cut checkpoint loaded");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::data);
    CHECK_THAT(e.what(), Catch::Contains(victim.filename().string()));
  }
}

TEST_CASE("a checkpoint whose save fails leaves nothing behind, written in place or atomically", "[checkpointer]") {
  for (const bool atomic : {true, false}) {
    INFO("checkpoint.atomic_files=" << atomic);
    test::TempDir dir("checkpointer-fails");
    const config::Workload w = tiny_model(dir / "ck", {std::string("checkpoint.atomic_files=") + (atomic ? "true" : "false")});
    const mpi::Comm comm = mpi::Comm::solo();
    std::vector<std::string> names;
    {
      engine::Checkpointer probe(w, comm, 1);
      probe.save(1, 10, 1);
      names = files_under(dir / "ck");
      fs::remove_all(dir / "ck");
    }
    REQUIRE(names.size() >= 2);
    // The last file this rank writes cannot be created: a folder stands under its name (or its temporary's).
    const fs::path last = fs::path(dir / "ck") / names.back();
    const fs::path blocker = atomic ? fs::path(storage::temp_path_for(last.string())) : last;
    fs::create_directories(blocker);
    fs::create_directories(blocker / "keep");
    engine::Checkpointer ck(w, comm, 1);
    CHECK_THROWS_AS(ck.save(1, 10, 1), Error);
    CHECK(files_under(dir / "ck").empty());  // the files written before the failing one are gone too
  }
}

TEST_CASE("the checkpoint staging buffer holds a whole piece, in units of the O_DIRECT alignment", "[checkpointer]") {
  constexpr std::uint64_t kMiB = 1 << 20;
  // A large model: two 64 MiB pieces and a page each, as before.
  CHECK(engine::Checkpointer::staging_bytes(10 * 1024 * kMiB, 4096) == 2 * (64 * kMiB + 4096));
  for (const std::size_t alignment : {std::size_t{512}, std::size_t{4096}, std::size_t{8192}, std::size_t{65536}})
    for (const std::uint64_t largest : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4843}, 3 * kMiB + 5, 64 * kMiB, 1024 * kMiB}) {
      INFO("alignment " << alignment << ", largest file " << largest);
      const std::size_t bytes = engine::Checkpointer::staging_bytes(largest, alignment);
      const std::size_t unit = std::max<std::size_t>(alignment, 4096);
      CHECK(bytes % (2 * unit) == 0);  // O_DIRECT writes whole aligned pieces of half the buffer
      CHECK(bytes / 2 >= std::min<std::uint64_t>(largest, 64 * kMiB));  // a file up to 64 MiB is one piece
      CHECK(bytes <= 2 * (64 * kMiB + unit));
      if (largest <= kMiB) CHECK(bytes <= 2 * (kMiB + 2 * unit));  // a small model, a small buffer
    }
}
