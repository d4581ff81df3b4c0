#pragma once
// Spreadsheet views of a run: per_epoch.csv (a row per epoch and phase, all ranks together) and
// per_rank.csv (a row per epoch, phase and rank: the straggler view).

#include <string>

#include "metrics/summary.hpp"
#include "report/context.hpp"

namespace trainio::report {

std::string per_epoch_csv(const metrics::RunSummary& run);
std::string per_rank_csv(const metrics::RunSummary& run, const RunContext& context);

}  // namespace trainio::report
