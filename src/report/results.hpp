#pragma once
// The result files of a run written at its end, in its results folder:
//   <rank>_output.json, <rank>_per_epoch_stats.json           (every rank, DLIO's: DlioFiles)
//   per_epoch_stats.json                                       (rank 0's again, for DLIO's
//                                                               older post-processor: DlioFiles)
//   config.yaml, per_epoch.csv, summary.json                   (rank 0: SummaryFiles)
// (per_rank.csv is written as the run goes: report/tables.hpp.) Each file is written whole under
// a temporary name and renamed.

#include <string>

#include "report/reporter.hpp"

namespace trainio::report {

class DlioFiles final : public Reporter {
 public:
  // `ranks_on_host`: ranks sharing this rank's host.
  DlioFiles(std::string folder, int rank, int ranks_on_host)
      : folder_(std::move(folder)), rank_(rank), ranks_on_host_(ranks_on_host) {}
  void write_results(const ResultsOf& run) override;

 private:
  std::string folder_;
  int rank_, ranks_on_host_;
};

// Rank 0's. summary.json comes last of the three: a folder that holds one holds a run.
class SummaryFiles final : public Reporter {
 public:
  explicit SummaryFiles(std::string folder) : folder_(std::move(folder)) {}
  void write_results(const ResultsOf& run) override;

 private:
  std::string folder_;
};

}  // namespace trainio::report
