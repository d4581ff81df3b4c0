// The checkpoint write layout keys (config/validate_checkpoint.cpp, through the loader):
// checkpoint.file_layout and checkpoint.write_buffer_bytes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "config/load.hpp"
#include "util/error.hpp"
#include "unit/config/notes.hpp"

using namespace trainio;

using trainio::test::contains;
using trainio::test::noted;

namespace {

config::Workload ckpt(const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"workflow.generate_data=false", "workflow.checkpoint=true",
                                  "checkpoint.num_checkpoints_write=1"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  // Checkpoint-only unless a test trains.
  if (std::find(all.begin(), all.end(), "workflow.train=true") == all.end()) all.insert(all.begin(), "workflow.train=false");
  return config::load_text("framework: pytorch\n", "t.yaml", "t", all);
}

// The message and the fix of the config error loading refuses the workload with.
std::string refusal(const std::vector<std::string>& overrides) {
  try {
    ckpt(overrides);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::config);
    return std::string(e.what()) + "\n" + e.hint();
  }
  FAIL("the workload was accepted");
  return {};
}

}  // namespace

TEST_CASE("checkpoint.file_layout and write_buffer_bytes load with their defaults and their values") {
  const config::Workload d = ckpt({});
  CHECK(d.checkpoint.file_layout == config::CheckpointLayout::torch);
  CHECK(d.checkpoint.write_buffer_bytes == 64ull << 20);
  CHECK_FALSE(noted(d, "checkpoint.write_buffer_bytes"));
  const config::Workload t = ckpt({"checkpoint.file_layout=per_tensor", "checkpoint.write_buffer_bytes=6144"});
  CHECK(t.checkpoint.file_layout == config::CheckpointLayout::per_tensor);
  CHECK(t.checkpoint.write_buffer_bytes == 6144);
  CHECK(ckpt({"checkpoint.file_layout=per_rank", "checkpoint.write_buffer_bytes=1MiB"}).checkpoint.write_buffer_bytes ==
        1u << 20);
  CHECK(ckpt({"checkpoint.file_layout=per_rank", "checkpoint.odirect=true", "checkpoint.write_buffer_bytes=12288"})
            .checkpoint.odirect);
}

TEST_CASE("a write buffer the layout cannot use is refused, naming the key and the fix") {
  SECTION("not a multiple of 4096 with O_DIRECT: the message suggests the next multiple") {
    const std::string m = refusal({"checkpoint.file_layout=per_rank", "checkpoint.odirect=true", "checkpoint.write_buffer_bytes=6144"});
    CHECK(contains(m, "checkpoint.write_buffer_bytes = 6144"));
    CHECK(contains(m, "8192"));
  }
  SECTION("zero, or above 1 GiB") {
    CHECK(contains(refusal({"checkpoint.write_buffer_bytes=0"}), "checkpoint.write_buffer_bytes"));
    CHECK(contains(refusal({"checkpoint.write_buffer_bytes=2GiB"}), "above 1 GiB"));
  }
  SECTION("an unknown layout lists the known ones") {
    const std::string m = refusal({"checkpoint.file_layout=per_node"});
    CHECK(contains(m, "checkpoint.file_layout"));
    CHECK(contains(m, "per_rank"));
  }
}

TEST_CASE("the raw layouts refuse loads, S3 and asynchronous saves; torch notes a buffer it does not use") {
  CHECK(contains(refusal({"checkpoint.file_layout=per_tensor", "checkpoint.num_checkpoints_read=1"}),
                 "num_checkpoints_read"));
  CHECK(contains(refusal({"checkpoint.file_layout=per_rank", "checkpoint.checkpoint_folder=s3://bench-ck/ck",
                          "storage.storage_type=s3", "storage.storage_options.endpoint_url=http://127.0.0.1:9"}),
                 "checkpoint.file_layout 'per_rank' writes files"));
  const std::string async = refusal({"checkpoint.file_layout=per_rank", "checkpoint.async=true", "workflow.train=true",
                                     "dataset.format=npz", "reader.data_loader=pytorch"});
  INFO(async);
  CHECK(contains(async, "does not combine with checkpoint.async"));
  CHECK(noted(ckpt({"checkpoint.write_buffer_bytes=1MiB"}), "checkpoint.write_buffer_bytes"));
}
