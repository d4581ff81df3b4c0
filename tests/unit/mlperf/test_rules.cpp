#include <catch2/catch.hpp>

#include "config/load.hpp"
#include "mlperf/rules.hpp"

using namespace trainio;

namespace {
constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;
}

TEST_CASE("MLPerf dataset rule: REFERENCE's unet3d example is bound by the 500 steps", "[mlperf]") {
  const auto w = config::load("unet3d_a100");
  const auto s = mlperf::required_dataset(w, 16, 2, 128 * kGiB);
  CHECK(s.samples_for_steps == 56000);               // 500 x 7 x 16
  CHECK(s.samples_for_memory == 9376);               // 5 x 2 x 128 GiB / 146,600,628 B = 9,375.03, rounded up
  CHECK(s.files == 56000);
  CHECK(s.subfolders == 6);                          // at most 10,000 files per folder
  CHECK(s.bytes == Approx(56000.0 * 146600628.0));
  CHECK(mlperf::override_line(s) == "dataset.num_files_train=56000 dataset.num_subfolders_train=6");
  CHECK(mlperf::dataset_shortfall(w, s, 16, 2, 128 * kGiB).value().find("at least 56,000 files") != std::string::npos);
}

TEST_CASE("MLPerf dataset rule: memory-bound, several samples per file, no subfolders below 10,000", "[mlperf]") {
  const auto w = config::load("resnet50_h100");
  const auto s = mlperf::required_dataset(w, 8, 1, 512 * kGiB);
  CHECK(s.samples_for_steps == 1600000);
  CHECK(s.samples_for_memory == 23973290);  // ceil(5 x 512 GiB / 114,660.07 B)
  CHECK(s.files == 19164);                  // ceil(23,973,290 / 1,251)
  const auto small = mlperf::required_dataset(config::load("cosmoflow_h100"), 1, 1, 1024 * 1024);
  CHECK(small.files == 500);
  CHECK(small.subfolders == 0);
  CHECK(mlperf::override_line(small) == "dataset.num_files_train=500");
  const auto enough = config::load("cosmoflow_h100", {"dataset.num_files_train=500"});
  CHECK_FALSE(mlperf::dataset_shortfall(enough, small, 1, 1, 1024 * 1024));
}

TEST_CASE("MLPerf divisions: CLOSED's keys, OPEN's keys, the per-run seed, and the rest", "[mlperf]") {
  CHECK(mlperf::division_of_key("dataset.num_files_train") == "closed");
  CHECK(mlperf::division_of_key("reader.read_threads") == "closed");
  CHECK(mlperf::division_of_key("storage.storage_root") == "closed");
  CHECK(mlperf::division_of_key("dataset.format") == "open");
  CHECK(mlperf::division_of_key("reader.data_loader") == "open");
  CHECK(mlperf::division_of_key("train.seed") == "seed");
  CHECK(mlperf::division_of_key("train.computation_time").empty());
  CHECK(mlperf::division_of_key("reader.batch_size").empty());
  CHECK(mlperf::find_benchmark("unet3d_b200") != nullptr);
  CHECK(mlperf::find_benchmark("llama3_70b")->closed_ranks == 64);
  CHECK(mlperf::find_benchmark("default") == nullptr);
  CHECK(mlperf::find_benchmark("unet3d_v100") == nullptr);
}
