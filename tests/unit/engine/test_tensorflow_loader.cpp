#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/load.hpp"
#include "engine/generate/generator.hpp"
#include "engine/trainer.hpp"
#include "plan/layout.hpp"
#include "plan/run_plan.hpp"
#include "unit/temp_dir.hpp"

using namespace trainio;

namespace {

// TFRecord files streamed by the tf.data pipeline replay: several interleave slots, each handing
// over chunks of records (files of 300 records make chunks of 128 and a remainder) that the
// pipeline drains while the slots refill the vectors it hands back. Also in the ThreadSanitizer
// build (trainio_thread_tests).
config::Workload tfrecord_workload(const std::string& folder, const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"dataset.num_files_train=12", "dataset.num_samples_per_file=300",
                                  "dataset.record_length_bytes=256", "dataset.record_length_bytes_stdev=0",
                                  "dataset.num_files_eval=0", "dataset.num_subfolders_train=0",
                                  "dataset.data_folder=" + folder, "reader.batch_size=16", "reader.read_threads=3",
                                  "train.computation_time=0", "train.epochs=3", "workflow.evaluation=false",
                                  "workflow.checkpoint=false"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return config::load_text(
      "framework: tensorflow\nreader:\n  data_loader: tensorflow\ndataset:\n  format: tfrecord\n", "t.yaml", "t", all);
}

// Each epoch's measurements, as the trainer hands them over.
std::vector<metrics::EpochRecord> generate_and_train(const config::Workload& w) {
  const plan::DatasetLayout layout(w);
  engine::GenerateOptions quiet;
  quiet.progress = false;
  engine::generate_dataset(w, layout, mpi::Comm::solo(), quiet);
  const plan::RunShape shape = plan::shape_run(w, layout, 1);
  metrics::RankRecord record;
  std::vector<metrics::EpochRecord> epochs;
  engine::TrainOptions options;
  options.on_epoch = [&](const metrics::EpochRecord& e) { epochs.push_back(e); };
  engine::train(w, layout, shape, mpi::Comm::solo(), options, record);
  return epochs;
}

}  // namespace

TEST_CASE("the tf.data replay streams every record of every file, every epoch, through its slots", "[tensorflow]") {
  for (const std::string shuffle : {"off", "seed"}) {
    test::TempDir dir("tf-loader");
    const std::vector<metrics::EpochRecord> epochs =
        generate_and_train(tfrecord_workload(dir.path(), {"reader.sample_shuffle=" + shuffle, "reader.shuffle_size=64"}));
    INFO("sample_shuffle " << shuffle);
    REQUIRE(epochs.size() == 3);
    for (const auto& e : epochs) {
      CHECK(e.train.samples == 12 * 300);  // 3,600 records in 225 batches of 16
      CHECK(e.train.sample_bytes == 12 * 300 * 256);
    }
  }
}
