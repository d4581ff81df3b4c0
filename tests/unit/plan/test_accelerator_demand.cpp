#include <catch2/catch.hpp>

#include "config/load.hpp"
#include "plan/accelerator_demand.hpp"
#include "plan/layout.hpp"

using namespace trainio;

TEST_CASE("an accelerator's demand is a batch of mean samples per step of compute", "[demand]") {
  const config::Workload w = config::load("default", {"dataset.record_length_bytes=1048576", "dataset.record_length_bytes_stdev=0",
                                                      "reader.batch_size=4", "train.computation_time=0.5"});
  const plan::DatasetLayout layout(w);
  CHECK(plan::accelerator_demand(w, layout) == Approx(4.0 * 1048576 / 0.5));
  const config::Workload idle = config::load("default", {"train.computation_time=0"});
  CHECK(plan::accelerator_demand(idle, plan::DatasetLayout(idle)) == 0);
}

TEST_CASE("the accelerators a bandwidth feeds at an AU target", "[demand]") {
  // 8 MiB/s each; 100 MiB/s at 90%: 100 / 7.2 = 13.9.
  CHECK(plan::predicted_accelerators(100.0 * 1048576, 8.0 * 1048576, 0.90) == 13);
  CHECK(plan::predicted_accelerators(80.0 * 1048576, 8.0 * 1048576, 1.0) == 10);  // exactly 10, not 9
  CHECK(plan::predicted_accelerators(7.0 * 1048576, 8.0 * 1048576, 0.90) == 0);   // not even one
  CHECK(plan::predicted_accelerators(100, 0, 0.9) == 0);                          // no demand: no prediction
  CHECK(plan::predicted_accelerators(100, 10, 0) == 0);                           // no target: no prediction
}
