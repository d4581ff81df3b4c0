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
  std::vector<std::string> bottlenecks;     // each training epoch's bottleneck verdict
  std::vector<std::string> page_cache;      // and its page-cache verdict
  std::vector<double> storage_wait_share;   // and its readers' share of busy time in storage calls (-1: none)
  std::optional<long> client_capacity;      // the run's estimate (trainio.train.client_capacity)
};
RunFigures figures_of(const report::RunResult& run);

// What set a probe's limit, from its epochs' bottleneck verdicts (docs/usage.md): "storage"
// (storage), "client" (client_cpu, concurrency, page_cache: the client's cores, its configured
// parallelism, or its memory served the reads; also any other verdict when the reads came from
// the page cache in those epochs), "storage" too for a straggler or unknown verdict whose readers
// spent at least half their busy time in storage calls (the bottleneck rules' threshold), else
// "unknown"; `why` says which verdicts in how many epochs.
struct Limit {
  std::string by;
  std::string why;
};
Limit limit_of(const RunFigures& f);

// "AU 97.3% PASS  1,234.5 samples/s  read 1.20 GiB/s", or why there is nothing to show.
std::string outcome_line(const JobOutcome& outcome);

}  // namespace trainio::campaign
