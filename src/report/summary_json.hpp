#pragma once
// summary.json: DLIO's keys with DLIO's formulas (so MLPerf tooling reads it), then a "trainio"
// block with what DLIO does not report: context, resolved config, measured bytes, latencies.

#include <nlohmann/json.hpp>
#include <string>

#include "config/workload.hpp"
#include "metrics/summary.hpp"
#include "plan/run_plan.hpp"
#include "report/context.hpp"

namespace trainio::report {

inline constexpr int kSchemaVersion = 1;


std::string summary_json(const config::Workload& w, const plan::DatasetLayout& layout, const plan::RunShape& shape,
                         const metrics::RunSummary& run, const RunContext& context);

}  // namespace trainio::report
