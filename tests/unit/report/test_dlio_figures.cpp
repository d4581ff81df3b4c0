// DLIO's summary figures of a phase over the run's epochs (report/dlio_figures.hpp): the mean and
// population stdev over the epochs that have a value, DLIO's MB/s, the AU verdict, and a note
// naming the cause for every figure without a value.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "report/dlio_figures.hpp"
#include "unit/text.hpp"

using namespace trainio;
using report::DlioFigures;
using trainio::test::contains;

namespace {

metrics::EpochSummary epoch(std::uint64_t n, std::optional<double> au, std::optional<double> throughput,
                            std::uint64_t steps = 10) {
  metrics::EpochSummary e;
  e.epoch = n;
  e.train.steps = steps;
  e.train.au = au;
  e.train.throughput_dlio = throughput;
  return e;
}

// The cause noted for `figure`, or "" when there is no note for it.
std::string note(const DlioFigures& f, const std::string& figure) {
  for (const auto& n : f.notes)
    if (n.figure == figure) return n.cause;
  return "";
}

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

TEST_CASE("AU and throughput over every epoch: mean, population stdev, DLIO's MB/s and the verdict") {
  config::Workload w;
  w.metric.au = 0.85;
  metrics::RunSummary run;
  run.epochs = {epoch(1, 0.8, 100.0), epoch(2, 0.9, 300.0)};
  const DlioFigures f = report::dlio_figures(run, "train", 2 * kMiB, w);
  REQUIRE(f.au.size() == 2);
  CHECK(*f.au[0] == Approx(80));
  CHECK(*f.au[1] == Approx(90));
  CHECK(*f.au_mean == Approx(85));
  CHECK(*f.au_stdev == Approx(5));  // numpy's std: over n, not n - 1
  CHECK(*f.throughput_mean == Approx(200));
  CHECK(*f.throughput_stdev == Approx(100));
  CHECK(*f.io_mean == Approx(400));   // 200 samples/s x 2 MiB
  CHECK(*f.io_stdev == Approx(200));
  REQUIRE(f.au_meets);
  CHECK(*f.au_meets);  // 85% meets 85%
  CHECK(f.notes.empty());
  CHECK(f.verdict_cause.empty());

  w.metric.au = 0.86;
  CHECK_FALSE(*report::dlio_figures(run, "train", 2 * kMiB, w).au_meets);
}

TEST_CASE("one epoch: no spread") {
  metrics::RunSummary run;
  run.epochs = {epoch(1, 0.95, 50.0)};
  const DlioFigures f = report::dlio_figures(run, "train", kMiB, config::Workload{});
  CHECK(*f.au_mean == Approx(95));
  CHECK(*f.au_stdev == 0);
  CHECK(*f.io_mean == Approx(50));
  CHECK(*f.au_meets);  // the default target is 90%
}

TEST_CASE("an epoch too short for DLIO's throughput: noted, and the mean is over the others") {
  metrics::RunSummary run;
  run.epochs = {epoch(1, 0.9, 100.0), epoch(2, 0.9, std::nullopt, 2)};
  const DlioFigures f = report::dlio_figures(run, "train", kMiB, config::Workload{});
  CHECK_FALSE(f.throughput[1]);
  CHECK(*f.throughput_mean == Approx(100));
  CHECK(*f.throughput_stdev == 0);
  const std::string cause = note(f, "metric.train_throughput_samples_per_second[1]");
  CHECK(contains(cause, "only 2 steps per rank in epoch 2"));
  CHECK(note(f, "metric.train_throughput_mean_samples_per_second") == "over 1 of 2 epochs: " + cause);
  CHECK(note(f, "metric.train_io_stdev_MB_per_second") == "over 1 of 2 epochs: " + cause);
  CHECK(note(f, "metric.train_au_percentage[1]").empty());  // its AU has a value
  CHECK(*f.au_meets);  // one epoch's result is enough to validate
}

TEST_CASE("checkpoints that cut the epoch into short blocks are named as the cause") {
  config::Workload w;
  w.workflow.checkpoint = true;
  metrics::RunSummary run;
  run.epochs = {epoch(1, 0.9, std::nullopt, 8)};
  const DlioFigures f = report::dlio_figures(run, "train", kMiB, w);
  CHECK_FALSE(f.throughput_mean);
  CHECK(contains(note(f, "metric.train_throughput_mean_samples_per_second"), "checkpoints cut its 8 steps per rank"));
  CHECK_FALSE(f.au_meets);
  CHECK(contains(f.verdict_cause, "no throughput result to validate: epoch 1: checkpoints cut"));
  CHECK(note(f, "metric.train_au_meet_expectation") == f.verdict_cause);
}

TEST_CASE("no AU in any epoch: no verdict, and the cause names the exclusions") {
  config::Workload w;
  w.output.exclude_start_steps = 2;
  w.output.exclude_end_steps = 1;
  metrics::RunSummary run;
  run.epochs = {epoch(1, std::nullopt, std::nullopt, 3)};
  run.epochs[0].train.degenerate = true;
  const DlioFigures f = report::dlio_figures(run, "train", kMiB, w);
  CHECK_FALSE(f.au_mean);
  CHECK_FALSE(f.au_stdev);
  CHECK_FALSE(f.io_mean);
  CHECK_FALSE(f.au_meets);
  const std::string cause = note(f, "metric.train_au_percentage[0]");
  CHECK(contains(cause, "epoch 1: a block of its 3 steps per rank"));
  CHECK(contains(cause, "exclude_end_steps = 3"));
  CHECK(note(f, "metric.train_au_mean_percentage") == cause);  // no epoch had one: no "over k of n"
  CHECK(f.verdict_cause == "no AU: " + cause);
}

TEST_CASE("no training epoch: no figures and the verdict says why") {
  const DlioFigures f = report::dlio_figures(metrics::RunSummary{}, "train", kMiB, config::Workload{});
  CHECK(f.au.empty());
  CHECK_FALSE(f.au_mean);
  CHECK_FALSE(f.au_meets);
  CHECK(f.verdict_cause == "no training epoch");
  REQUIRE(f.notes.size() == 1);
  CHECK(f.notes[0].figure == "metric.train_au_meet_expectation");
}

TEST_CASE("evaluation: only evaluated epochs, and the verdict on the AU alone") {
  metrics::RunSummary run;
  run.epochs = {epoch(1, 0.5, 10.0), epoch(2, 0.5, 10.0), epoch(3, 0.5, 10.0)};
  run.epochs[1].evaluated = true;
  run.epochs[1].eval.au = 0.92;
  run.epochs[2].evaluated = true;
  run.epochs[2].eval.au = 0.96;  // no throughput: DLIO's evaluation verdict needs none
  const DlioFigures f = report::dlio_figures(run, "eval", kMiB, config::Workload{});
  REQUIRE(f.au.size() == 2);
  CHECK(*f.au_mean == Approx(94));
  CHECK(*f.au_stdev == Approx(2));
  CHECK_FALSE(f.throughput_mean);
  REQUIRE(f.au_meets);
  CHECK(*f.au_meets);
  CHECK(contains(note(f, "metric.eval_throughput_samples_per_second[0]"), "epoch 2: some rank's time window T"));
  CHECK(note(f, "metric.eval_au_meet_expectation").empty());
}
