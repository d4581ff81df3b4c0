#include <catch2/catch.hpp>

#include "config/load.hpp"
#include "unit/plan/npz_workload.hpp"
#include "plan/epoch_plan.hpp"
#include "plan/run_plan.hpp"
#include "util/error.hpp"

using namespace trainio;
using namespace trainio::plan;

TEST_CASE("a batch x ranks beyond 2^63 gives no step, not a division by a wrapped zero") {
  CHECK(steps_per_epoch(Partition::strided, 8, 1, 1ULL << 62, 4) == 0);
  CHECK(steps_per_epoch(Partition::local_files, 8, 1, 1ULL << 62, 4) == 0);
  CHECK(steps_per_epoch(Partition::contiguous, 8, 1, 1ULL << 62, 4) == 0);
  CHECK(steps_per_epoch(Partition::file_streams, 8, 1, 1ULL << 62, 4) == 0);
}

TEST_CASE("the run's steps are counted without a loop over epochs, and refused when they overflow") {
  // 10 steps per epoch; 10^12 epochs are 10^13 steps: counted at once, not epoch by epoch.
  auto w = test::npz_workload({"dataset.num_files_train=40", "reader.batch_size=4", "train.epochs=1000000000000",
                               "workflow.evaluation=true", "dataset.num_files_eval=4", "evaluation.eval_after_epoch=2",
                               "evaluation.epochs_between_evals=3"});
  const DatasetLayout layout(w);
  const auto shape = shape_run(w, layout, 1);
  CHECK(shape.epochs == 1000000000000ULL);
  CHECK(shape.total_train_steps == 10000000000000ULL);
  CHECK(shape.evaluations == (1000000000000ULL - 2) / 3 + 1);
  // 4 * 10^18 epochs of 10 steps are more steps than 2^63.
  const auto huge =
      test::npz_workload({"dataset.num_files_train=40", "reader.batch_size=4", "train.epochs=4000000000000000000"});
  try {
    shape_run(huge, DatasetLayout(huge), 1);
    FAIL("expected a config error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::config);
    CHECK(std::string(e.what()).find("train.epochs") != std::string::npos);
  }
  // A step cap ends such a run early: nothing overflows.
  const auto capped = test::npz_workload({"dataset.num_files_train=40", "reader.batch_size=4",
                                          "train.epochs=4000000000000000000", "train.total_training_steps=25"});
  const auto s = shape_run(capped, DatasetLayout(capped), 1);
  CHECK(s.epochs == 3);
  CHECK(s.total_train_steps == 25);
}

TEST_CASE("the evaluation count follows DLIO's schedule for small runs too") {
  for (std::int64_t epochs = 1; epochs <= 12; ++epochs) {
    const auto w = test::npz_workload({"dataset.num_files_train=8", "train.epochs=" + std::to_string(epochs),
                                       "workflow.evaluation=true", "dataset.num_files_eval=4",
                                       "evaluation.eval_after_epoch=2", "evaluation.epochs_between_evals=3"});
    std::uint64_t expected = 0;
    for (std::uint64_t e = 1; e <= static_cast<std::uint64_t>(epochs); ++e) expected += evaluates_after(w, e) ? 1 : 0;
    CHECK(shape_run(w, DatasetLayout(w), 1).evaluations == expected);
  }
}
