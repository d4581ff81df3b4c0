#pragma once
// `trainio verify` of a set of runs: an aggregate `trainio report` wrote (aggregate.json, or
// aggregate-N.json) checked against the runs' summaries: each figure's values are the runs' own,
// its mean, stdev, CV and spread are recomputed from them, and with --mlperf the checks the
// summaries can decide (run count, AU verdicts, runs one after the other, results within 5%)
// agree with the pass or fail it reports.

#include <string>

#include "verify/checks.hpp"

namespace trainio::verify {

// Checks the aggregate file at `path` into `checks`. Throws a usage error when it is not JSON.
std::string verify_aggregate(const std::string& path, Checks& checks);

}  // namespace trainio::verify
