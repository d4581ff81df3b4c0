#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/load.hpp"
#include "engine/trainer.hpp"
#include "plan/layout.hpp"
#include "plan/run_plan.hpp"

using namespace trainio;

namespace {

// Synthetic samples: the loaders, the step loop and the metrics run, no file is touched.
config::Workload synthetic(const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"dataset.num_files_train=8", "dataset.num_samples_per_file=4",
                                  "dataset.record_length_bytes=1024", "reader.batch_size=4",
                                  "reader.read_threads=2", "train.computation_time=0.0001",
                                  "workflow.evaluation=false", "workflow.checkpoint=false"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return config::load_text("framework: pytorch\nreader:\n  data_loader: pytorch\ndataset:\n  format: synthetic\n",
                           "t.yaml", "t", all);
}

struct Run {
  metrics::RankRecord record;
  std::vector<metrics::EpochRecord> epochs_reported;  // each epoch's measurements, handed over as it ends
  plan::RunShape shape;
};

Run train(const config::Workload& w) {
  const plan::DatasetLayout layout(w);
  Run run;
  run.shape = plan::shape_run(w, layout, 1);
  engine::TrainOptions options;
  options.on_epoch = [&](const metrics::EpochRecord& e) { run.epochs_reported.push_back(e); };
  engine::train(w, layout, run.shape, mpi::Comm::solo(), options, run.record);
  return run;
}

}  // namespace

TEST_CASE("the trainer runs every planned step of every epoch and reports each epoch once", "[trainer]") {
  const Run run = train(synthetic({"train.epochs=3"}));
  REQUIRE(run.shape.train_steps_per_epoch == 8);  // 32 samples in batches of 4
  REQUIRE(run.record.epochs.size() == 3);
  REQUIRE(run.epochs_reported.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& e = run.epochs_reported[i];
    CHECK(e.epoch == i + 1);
    CHECK(e.train.samples == 32);
    CHECK(e.train.sample_bytes == 32 * 1024);
    CHECK(e.train.steps_logged == 8);
    CHECK(e.train.compute_ns.count() == 8);
    CHECK_FALSE(e.evaluated);
    CHECK(run.record.epochs[i].epoch == e.epoch);  // the record keeps the epoch's timeline
    CHECK(run.record.epochs[i].train.steps_logged == 8);
  }
  CHECK(run.record.steps->size() == 24);
  CHECK(run.record.epochs[1].train.first_step == 8);
}

TEST_CASE("the run's step cap ends the run mid-epoch", "[trainer]") {
  const Run run = train(synthetic({"train.epochs=5", "train.total_training_steps=11"}));
  REQUIRE(run.record.epochs.size() == 2);  // 8 steps, then 3
  CHECK(run.record.epochs[0].train.steps_logged == 8);
  CHECK(run.record.epochs[1].train.steps_logged == 3);
  CHECK(run.epochs_reported[1].train.samples == 12);
}

TEST_CASE("evaluation runs after the epochs DLIO schedules it for", "[trainer]") {
  const Run run = train(synthetic({"train.epochs=4", "workflow.evaluation=true", "dataset.num_files_eval=4",
                                   "reader.batch_size_eval=2", "evaluation.eval_time=0.0001",
                                   "evaluation.eval_after_epoch=1", "evaluation.epochs_between_evals=2"}));
  REQUIRE(run.record.epochs.size() == 4);
  std::vector<std::uint64_t> evaluated;
  for (const auto& e : run.epochs_reported)
    if (e.evaluated) {
      evaluated.push_back(e.epoch);
      CHECK(e.eval.samples == 16);  // 4 files of 4 samples, every one read
    }
  CHECK(evaluated == std::vector<std::uint64_t>{1, 3});
}
