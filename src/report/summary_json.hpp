#pragma once
// summary.json: DLIO's keys with DLIO's formulas (so MLPerf tooling reads it), then a "trainio"
// block with what DLIO does not report: context, resolved config, measured bytes, latencies.
// Written as a stream (a reporter, not a document assembled at the end): lists that grow with
// the run (hosts, epochs, checkpoints) are written one element at a time.

#include <string>

#include "config/workload.hpp"
#include "metrics/summary.hpp"
#include "plan/run_plan.hpp"
#include "report/context.hpp"
#include "report/json_stream.hpp"

namespace trainio::report {

inline constexpr int kSchemaVersion = 1;

void summary_json(JsonStream& out, const config::Workload& w, const plan::DatasetLayout& layout,
                  const plan::RunShape& shape, const metrics::RunSummary& run, const RunContext& context);

}  // namespace trainio::report
