#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "config/load.hpp"
#include "unit/plan/npz_workload.hpp"
#include "plan/generation.hpp"

using namespace trainio;

namespace {
std::vector<std::uint64_t> files_to_generate(const plan::DatasetLayout& layout, int rank, int ranks) {
  const plan::FileShare share(layout, rank, ranks);
  std::vector<std::uint64_t> files;
  for (std::uint64_t i = 0; i < share.size(); ++i) files.push_back(share[i]);
  return files;
}
}  // namespace

TEST_CASE("equal files are dealt round robin, as DLIO does") {
  const plan::DatasetLayout l(test::npz_workload({"dataset.num_files_train=10", "dataset.num_files_eval=3"}));
  CHECK(files_to_generate(l, 1, 3) == std::vector<std::uint64_t>{1, 4, 7, 10});
  CHECK(files_to_generate(l, 0, 1).size() == 13);
}

TEST_CASE("files of varying size are dealt by bytes: every file once, loads nearly even") {
  const plan::DatasetLayout l(
      test::npz_workload({"dataset.num_files_train=168", "dataset.record_length_bytes=146600628",
                          "dataset.record_length_bytes_stdev=68341808"}));
  for (int ranks : {2, 3, 8}) {
    std::vector<int> owner(l.total_files(), -1);
    std::vector<double> load(ranks, 0);
    for (int r = 0; r < ranks; ++r) {
      for (const auto k : files_to_generate(l, r, ranks)) {
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

TEST_CASE("more files of varying size than are dealt by bytes go round robin, computed file by file") {
  const auto many = std::to_string(plan::kMaxFilesDealtByBytes + 5);
  const plan::DatasetLayout l(
      test::npz_workload({"dataset.num_files_train=" + many, "dataset.num_files_eval=0",
                          "dataset.record_length_bytes=4096", "dataset.record_length_bytes_stdev=1000"}));
  REQUIRE(l.sizes_vary());
  const plan::FileShare share(l, 2, 3);
  CHECK(share.size() == (plan::kMaxFilesDealtByBytes + 5 - 2 + 2) / 3);
  CHECK(share[0] == 2);
  CHECK(share[1] == 5);
  CHECK(share[share.size() - 1] == plan::kMaxFilesDealtByBytes + 4);  // the last file, 2 + 3 * 349526
  CHECK(plan::FileShare().size() == 0);
}
