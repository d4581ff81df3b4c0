#pragma once
// `trainio max-accelerators`: MLPerf Storage's headline question — the largest number of
// accelerators (ranks) whose training still meets the AU target (metric.au) on this storage.
// Probes 1, 2, 4, ... ranks until one fails or the limit is reached, then bisects between the
// last count that passed and the first that failed. Each probe is a real run (campaign/job.hpp)
// kept in its own folder; the answer comes with every probe's figures.

#include <string>
#include <vector>

namespace trainio::campaign {

struct MaxAcceleratorsSpec {
  std::vector<std::string> words;  // workload and overrides
  int ranks_to = 64;               // the largest count to try
  double storage_bandwidth = 0;    // bytes/s: the model's prediction beside the answer (0: none)
  std::string launcher;
  std::string output;
};

// Runs the search and writes DIR/max-accelerators.csv and .json. Returns 0 with an answer, 1
// when a probe could not run (its log is named).
int run_max_accelerators(const MaxAcceleratorsSpec& spec);

// The next count to probe, given the largest that passed (0: none yet) and the smallest that
// failed (0: none yet); 0 when the search is over. Exposed for tests.
int next_probe(int passed, int failed, int ranks_to);

}  // namespace trainio::campaign
