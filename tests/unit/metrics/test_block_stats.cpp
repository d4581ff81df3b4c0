#include <catch2/catch.hpp>

#include <optional>

#include "metrics/block_stats.hpp"
#include "metrics/summary.hpp"

using namespace trainio::metrics;

namespace {
BlockResult run_block(const std::vector<StepTiming>& steps, std::uint64_t exclude_start, std::uint64_t exclude_end,
                      std::uint64_t batch, BlockAccumulator::DlioFormula formula, double extra_seconds = 0) {
  BlockAccumulator acc(exclude_start, exclude_end);
  double total = extra_seconds;
  for (const auto& s : steps) {
    acc.add(s);
    total += s.load + s.compute + s.barrier;
  }
  acc.start(0);
  acc.end(static_cast<std::int64_t>(total * 1e9));
  return acc.result(batch, formula);
}
}  // namespace

TEST_CASE("AU and throughput follow DLIO's formulas, with the first step left out") {
  // Four steps: the first waits 0.5 s for data (a cold start), the rest 0.1 s; 1 s of compute each.
  const std::vector<StepTiming> steps = {{0.5, 1, 0}, {0.1, 1, 0}, {0.1, 1, 0}, {0.1, 1, 0}};
  const auto r = run_block(steps, 1, 0, 8, BlockAccumulator::DlioFormula::train);
  CHECK(r.steps == 4);
  CHECK(r.duration == Approx(4.8));
  CHECK(r.window_time == Approx(3.3));  // 4.8 - (0.5 + 1) for the excluded first step
  CHECK(r.window_compute == Approx(3.0));
  CHECK(r.au == Approx(3.0 / 3.3));
  CHECK(r.throughput_dlio == Approx((4 - 2) * 8 / 3.3));  // DLIO's hard-coded "- 2"
  CHECK(r.throughput == Approx(3 * 8 / 3.3));             // the steps actually in the window
  CHECK_FALSE(r.degenerate);
}

TEST_CASE("exclude_end_steps leaves out the last steps' load and compute") {
  const std::vector<StepTiming> steps = {{0.5, 1, 0}, {0.1, 1, 0}, {0.1, 1, 0}, {0.3, 1, 0}};
  const auto r = run_block(steps, 1, 1, 1, BlockAccumulator::DlioFormula::train);
  CHECK(r.window_steps == 2);
  CHECK(r.window_time == Approx(5.0 - 1.5 - 1.3));
  CHECK(r.au == Approx(2.0 / 2.2));
}

TEST_CASE("barrier time counts against AU but is in no step's proc time") {
  const std::vector<StepTiming> steps = {{0, 1, 0}, {0, 1, 1}, {0, 1, 1}};
  const auto r = run_block(steps, 1, 0, 1, BlockAccumulator::DlioFormula::train);
  CHECK(r.window_time == Approx(5 - 1));
  CHECK(r.au == Approx(2.0 / 4.0));
  CHECK(r.total_barrier == Approx(2));
}

TEST_CASE("too few steps to exclude: AU and throughput have no value, and it is flagged") {
  // One step, and the first is left out: T has nothing in it (DLIO's sums would be over nothing).
  const auto r = run_block({{0.2, 1, 0}}, 1, 0, 4, BlockAccumulator::DlioFormula::train);
  CHECK(r.degenerate);
  CHECK_FALSE(r.au);
  CHECK_FALSE(r.throughput_dlio);  // DLIO's (1 - 2) would be negative
  CHECK(r.throughput == Approx(4 / 1.2));  // trainio's exact figure over the whole block
}

TEST_CASE("two steps: DLIO's (steps - 2) throughput has no value, AU over the step left has one") {
  const auto r = run_block({{0.5, 1, 0}, {0.1, 1, 0}}, 1, 0, 4, BlockAccumulator::DlioFormula::train);
  CHECK_FALSE(r.degenerate);
  CHECK_FALSE(r.throughput_dlio);
  REQUIRE(r.au);
  CHECK(*r.au == Approx(1.0 / 1.1));
  // Three steps: (3 - 2) steps' worth over T.
  const auto three = run_block({{0.5, 1, 0}, {0.1, 1, 0}, {0.1, 1, 0}}, 1, 0, 4, BlockAccumulator::DlioFormula::train);
  REQUIRE(three.throughput_dlio);
  CHECK(*three.throughput_dlio == Approx(1 * 4 / 2.2));
}

TEST_CASE("evaluation throughput is steps x batch over the whole duration, as DLIO") {
  const auto r = run_block({{0.5, 1, 0}, {0.5, 1, 0}}, 1, 0, 2, BlockAccumulator::DlioFormula::eval);
  CHECK(r.throughput_dlio == Approx(2 * 2 / 3.0));
}

TEST_CASE("mean and population stdev as numpy computes them") {
  CHECK(mean_of({1, 2, 3, 4}) == Approx(2.5));
  CHECK(stdev_of({1, 2, 3, 4}) == Approx(1.118034));
  CHECK(stdev_of({}) == 0);
}

TEST_CASE("an epoch's DLIO value is the mean of its blocks weighted by their steps") {
  using trainio::metrics::step_weighted_mean;
  // A checkpoint after step 3 of 4: block 1 (3 steps) at 90% AU, block 2 (1 step) at 50%.
  CHECK(step_weighted_mean({{3, 0.9}, {1, 0.5}}) == Approx((3 * 0.9 + 1 * 0.5) / 4));
  CHECK(step_weighted_mean({{5, 0.7}}) == Approx(0.7));
  CHECK_FALSE(step_weighted_mean({}));
  CHECK_FALSE(step_weighted_mean({{0, 0.7}}));
  // Blocks without a value (too few steps) are left out; none with a value: no value.
  CHECK(step_weighted_mean({{3, 0.9}, {1, std::nullopt}}) == Approx(0.9));
  CHECK_FALSE(step_weighted_mean({{2, std::nullopt}, {2, std::nullopt}}));
}
