#pragma once
// What one campaign run showed, read from its summary, and the line a campaign prints for it.

#include <optional>
#include <string>
#include <vector>

#include "campaign/job.hpp"

namespace trainio::campaign {

struct RunFigures {
  std::optional<double> au_mean;            // percent, mean over epochs
  std::optional<double> au_lowest_epoch;    // percent
  std::optional<double> samples_per_second; // DLIO's training throughput
  std::optional<double> read_bytes_per_second;  // measured: what the storage calls returned
  std::string verdict;                      // "pass", "fail", or "unknown" (no AU verdict)
};
RunFigures figures_of(const report::RunResult& run);

// "AU 97.3% PASS  1,234.5 samples/s  read 1.20 GiB/s", or why there is nothing to show.
std::string outcome_line(const JobOutcome& outcome);

}  // namespace trainio::campaign
