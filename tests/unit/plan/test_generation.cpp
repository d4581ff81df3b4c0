#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "config/load.hpp"
#include "unit/plan/npz_workload.hpp"
#include "plan/generation.hpp"

using namespace trainio;

namespace {
config::Workload workload(const std::vector<std::string>& overrides) { return test::npz_workload(overrides); }
}  // namespace

TEST_CASE("equal files are dealt round robin, as DLIO does") {
  const plan::DatasetLayout l(workload({"dataset.num_files_train=10", "dataset.num_files_eval=3"}));
  CHECK(plan::files_to_generate(l, 1, 3) == std::vector<std::uint64_t>{1, 4, 7, 10});
  CHECK(plan::files_to_generate(l, 0, 1).size() == 13);
}

TEST_CASE("files of varying size are dealt by bytes: every file once, loads nearly even") {
  const plan::DatasetLayout l(workload({"dataset.num_files_train=168", "dataset.record_length_bytes=146600628",
                                        "dataset.record_length_bytes_stdev=68341808"}));
  for (int ranks : {2, 3, 8}) {
    std::vector<int> owner(l.total_files(), -1);
    std::vector<double> load(ranks, 0);
    for (int r = 0; r < ranks; ++r) {
      for (const auto k : plan::files_to_generate(l, r, ranks)) {
        REQUIRE(owner[k] == -1);
        owner[k] = r;
        load[r] += static_cast<double>(l.file_by_global_index(k).data_bytes());
      }
    }
    CHECK(std::count(owner.begin(), owner.end(), -1) == 0);
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    const double biggest = static_cast<double>(l.file_by_global_index(0).data_bytes()) * 3;  // well above one file
    CHECK(*hi - *lo < biggest);
    CHECK(*hi / *lo < 1.05);
  }
}
