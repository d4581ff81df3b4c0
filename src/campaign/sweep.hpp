#pragma once
// `trainio sweep`: one workload over the cross product of some keys' values and rank counts,
// each point run `repeat` times, each run its own job (campaign/job.hpp) in its own folder;
// then a row per point in sweep.csv. A failed run is recorded and the sweep goes on; rerunning
// the same sweep keeps what finished and runs only what did not.

#include <string>
#include <utility>
#include <vector>

namespace trainio::campaign {

struct SweepSpec {
  std::vector<std::string> words;  // workload and the overrides every point shares
  std::vector<std::pair<std::string, std::vector<std::string>>> vary;  // key, its values
  std::vector<int> ranks{1};
  int repeat = 1;
  std::string launcher;  // with {ranks}
  std::string output;    // the sweep's folder
};

// Parses "--vary KEY=V1,V2,..." and "--ranks 1,2,4"; usage errors name the option.
std::pair<std::string, std::vector<std::string>> parse_vary(const std::string& text);
std::vector<int> parse_ranks(const std::string& text);

struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> values;  // key=value of each varied key
  int ranks = 1;
  std::string name;  // its folder: "ranks=2,reader.read_threads=4"
};
// Every point, ranks slowest-varying last: in the order they run.
std::vector<SweepPoint> sweep_points(const SweepSpec& spec);

// Runs the sweep (checking every point's workload first: a config error stops it before any
// run) and writes DIR/sweep.csv. Returns 0 when every run finished, 1 when some failed.
int run_sweep(const SweepSpec& spec);

}  // namespace trainio::campaign
