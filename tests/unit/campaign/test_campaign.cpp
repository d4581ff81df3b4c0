#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "campaign/job.hpp"
#include "campaign/max_accelerators.hpp"
#include "campaign/sweep.hpp"
#include "util/error.hpp"

using namespace trainio;

TEST_CASE("sweep options: --vary and --ranks are parsed, and malformed ones refused naming the option", "[campaign]") {
  const auto [key, values] = campaign::parse_vary("reader.read_threads=1,2,4");
  CHECK(key == "reader.read_threads");
  CHECK(values == std::vector<std::string>{"1", "2", "4"});
  for (const char* bad : {"reader.read_threads", "=1,2", "reader.read_threads=", "reader.read_threads=1,,2",
                          "reader.read_threads=1,"}) {
    INFO(bad);
    CHECK_THROWS_WITH(campaign::parse_vary(bad), Catch::Contains("--vary"));
  }
  CHECK(campaign::parse_ranks("1,2,16") == std::vector<int>{1, 2, 16});
  for (const char* bad : {"", "0", "1,x", "2.5", "-1", "1,,2"}) {
    INFO(bad);
    CHECK_THROWS_WITH(campaign::parse_ranks(bad), Catch::Contains("--ranks"));
  }
}

TEST_CASE("a sweep's points: every combination, the last key fastest, ranks outermost", "[campaign]") {
  campaign::SweepSpec spec;
  spec.vary = {{"reader.read_threads", {"1", "2"}}, {"dataset.data_folder", {"/a/b", "c"}}};
  spec.ranks = {1, 4};
  const auto points = campaign::sweep_points(spec);
  REQUIRE(points.size() == 8);
  CHECK(points[0].name == "ranks=1,reader.read_threads=1,dataset.data_folder=_a_b");  // a folder name: no slashes
  CHECK(points[0].values[1].second == "/a/b");                                       // the value itself is kept
  CHECK(points[1].name == "ranks=1,reader.read_threads=1,dataset.data_folder=c");
  CHECK(points[2].name == "ranks=1,reader.read_threads=2,dataset.data_folder=_a_b");
  CHECK(points[4].ranks == 4);
  CHECK(points[7].name == "ranks=4,reader.read_threads=2,dataset.data_folder=c");
  spec.vary.clear();
  CHECK(campaign::sweep_points(spec).size() == 2);  // ranks only
}

TEST_CASE("the accelerator search doubles, then bisects, and stops where pass meets fail", "[campaign]") {
  // Doubling while every probe passes, then the limit itself.
  CHECK(campaign::next_probe(0, 0, 64) == 1);
  CHECK(campaign::next_probe(1, 0, 64) == 2);
  CHECK(campaign::next_probe(32, 0, 64) == 64);
  CHECK(campaign::next_probe(64, 0, 64) == 0);
  CHECK(campaign::next_probe(8, 0, 12) == 12);
  CHECK(campaign::next_probe(12, 0, 12) == 0);
  // Bisection between the largest pass and the smallest fail.
  CHECK(campaign::next_probe(8, 16, 64) == 12);
  CHECK(campaign::next_probe(12, 16, 64) == 14);
  CHECK(campaign::next_probe(14, 15, 64) == 0);
  CHECK(campaign::next_probe(0, 1, 64) == 0);  // even 1 fails: done, the answer is none
  // A whole search against a storage that feeds 11 ranks: 1 2 4 8 16, then 12 10 11.
  std::vector<int> probed;
  int passed = 0, failed = 0;
  for (int n = campaign::next_probe(0, 0, 64); n > 0; n = campaign::next_probe(passed, failed, 64)) {
    probed.push_back(n);
    (n <= 11 ? passed : failed) = n;
  }
  CHECK(probed == std::vector<int>{1, 2, 4, 8, 16, 12, 10, 11});
  CHECK(passed == 11);
}

TEST_CASE("the launcher template gets the rank count, and must have a place for it", "[campaign]") {
  CHECK(campaign::launcher_words("mpirun -np {ranks} --bind-to none", 8) ==
        std::vector<std::string>{"mpirun", "-np", "8", "--bind-to", "none"});
  CHECK(campaign::launcher_words("srun --mpi=pmix --ntasks={ranks}", 4) ==
        std::vector<std::string>{"srun", "--mpi=pmix", "--ntasks=4"});
  CHECK_THROWS_WITH(campaign::launcher_words("mpirun -np 4", 4), Catch::Contains("{ranks}"));
}
