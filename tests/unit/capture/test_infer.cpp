// The inference on profiles built from events: a DataLoader's workers, batches, order; checkpoints only.
#include <catch2/catch.hpp>

#include "capture/infer.hpp"
#include "saves.hpp"

using namespace trainio::capture;

namespace {

void add(Profile& p, Call call, long pid, const std::string& path, std::int64_t t, std::uint64_t bytes = 0,
         std::uint64_t offset = 0) {
  Event e;
  e.call = call;
  e.pid = pid;
  e.path = path;
  e.start_ns = t;
  e.dur_ns = 1000;
  e.bytes = bytes;
  e.offset = offset;
  e.has_offset = call == Call::read || call == Call::write;
  p.add(e);
}

}  // namespace

TEST_CASE("infer: two forked workers reading shuffled batches of 4 files over 2 epochs", "[capture]") {
  Profile p;
  Event fork;
  fork.call = Call::spawn;
  fork.pid = 1;
  for (long w : {2L, 3L}) fork.child = w, p.add(fork);
  const int order[16] = {9, 2, 14, 5, 0, 11, 7, 12, 3, 15, 1, 8, 13, 6, 10, 4};
  std::int64_t t[2] = {0, 500'000};
  for (int epoch = 0; epoch < 2; ++epoch)
    for (int b = 0; b < 4; ++b) {
      const long worker = 2 + b % 2;
      std::int64_t& now = t[b % 2];
      for (int i = 0; i < 4; ++i) {
        const std::string f = "/data/train/img_" + std::to_string(order[b * 4 + i] + 10) + ".npz";
        add(p, Call::open, worker, f, now += 10'000);
        add(p, Call::read, worker, f, now += 10'000, 8192, 0);
        add(p, Call::close, worker, f, now += 10'000);
      }
      now += 5'000'000;  // the worker waits for the main process to take its batch
    }
  const Inference inf = infer(p, InferOptions{.read_files = false});
  auto value = [&](const char* key) { return inf.find(key) ? inf.find(key)->value : std::string("(none)"); };
  CHECK(inf.dataset_path == "/data/train");
  CHECK(value("dataset.format") == "npz");  // from the names: the files are not there
  CHECK(value("dataset.num_files_train") == "16");
  CHECK(value("reader.read_threads") == "2");
  CHECK(value("reader.batch_size") == "4");
  CHECK(value("reader.file_shuffle") == "seed");
  CHECK(value("train.epochs") == "2");
  CHECK(value("workflow.checkpoint") == "False");
}

TEST_CASE("infer: a job that only writes checkpoints is a checkpoint-only workload", "[capture]") {
  Profile p;
  std::int64_t now = 0;
  for (int i = 0; i < 3; ++i)
    now = trainio::test::add_save(p, "/ckpt/model_" + std::to_string(i) + ".pt", now + 200'000'000, {1 << 20, 1 << 20, 1 << 20, 1 << 20});
  add(p, Call::write, 1, "/tmp/abc123", now, 4, 0);  // Python's tempfile probe: no checkpoint
  const Inference inf = infer(p, InferOptions{});
  auto value = [&](const char* key) { return inf.find(key) ? inf.find(key)->value : std::string("(none)"); };
  CHECK(value("workflow.train") == "False");
  CHECK(value("workflow.checkpoint") == "True");
  CHECK(value("checkpoint.num_checkpoints_write") == "3");
  // Every file written in the same four 1 MiB writes: torch.save's four tensors.
  CHECK(value("model.model_size_bytes") == "0");
  CHECK(value("model.layer_parameters") == "[1048576, 1048576, 1048576, 1048576]");
  CHECK(std::stod(value("checkpoint.time_between_checkpoints")) == Approx(0.2).margin(0.01));
}

TEST_CASE("infer: checkpoints whose large writes differ are replayed by their size alone", "[capture]") {
  Profile p;
  std::int64_t now = 0;
  // The same 4 MiB and 1 KiB of records, cut into other tensors in the second file.
  now = trainio::test::add_save(p, "/ckpt/model_0.pt", now, {4 << 20, 1024});
  trainio::test::add_save(p, "/ckpt/model_1.pt", now + 200'000'000, {2 << 20, 2 << 20, 1024});
  const Inference inf = infer(p, InferOptions{});
  auto value = [&](const char* key) { return inf.find(key) ? inf.find(key)->value : std::string("(none)"); };
  CHECK(value("model.model_size_bytes") == "4195328");
  CHECK(value("model.layer_parameters") == "(none)");
}

TEST_CASE("infer: NPZ and NPY samples from file sizes when the files are gone", "[capture]") {
  // One load of each of 4 files, read to its end: numpy.savez puts 498 bytes around a 256 x 256
  // sample, np.save 128.
  for (const auto& [ext, size] : {std::pair<std::string, std::uint64_t>{"npz", 66034}, {"npy", 65664}}) {
    Profile p;
    std::int64_t now = 0;
    for (int i = 0; i < 4; ++i) {
      const std::string f = "/data/train/img_" + std::to_string(i) + "." + ext;
      add(p, Call::open, 1, f, now += 10'000);
      add(p, Call::read, 1, f, now += 10'000, size, 0);
      add(p, Call::close, 1, f, now += 10'000);
    }
    const Inference inf = infer(p, InferOptions{.read_files = false});
    CHECK(inf.find("dataset.record_length_bytes")->value == "65536");
  }
}
