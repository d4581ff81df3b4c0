#pragma once
// Every result file of a run, in its results folder:
//   summary.json, config.yaml, per_epoch.csv                 (rank 0; per_rank.csv is
//                                                               written as the run goes:
//                                                               report/tables.hpp)
//   <rank>_output.json, <rank>_per_epoch_stats.json           (every rank, DLIO's)
//   per_epoch_stats.json                                       (rank 0's again, for DLIO's
//                                                               older post-processor)
// Each file is written whole under a temporary name and renamed.

#include <string>

#include "config/workload.hpp"
#include "metrics/run_record.hpp"
#include "metrics/summary.hpp"
#include "plan/run_plan.hpp"
#include "report/context.hpp"

namespace trainio::report {

struct ResultsOf {
  const config::Workload& workload;
  const plan::DatasetLayout& layout;
  const plan::RunShape& shape;
  const metrics::RankRecord& record;  // this rank's
  const metrics::RunSummary& summary;
  const RunContext& context;
};

// Writes this rank's files (and rank 0's). `ranks_on_host`: ranks sharing this rank's host.
void write_results(const std::string& folder, const ResultsOf& run, int rank, int ranks_on_host);

}  // namespace trainio::report
