#pragma once
// `trainio verify` of one results folder: every figure the run reported (summary.json, the CSVs,
// DLIO's per-rank files) recomputed from the run's raw records (<rank>_records.jsonl and the step
// lists of <rank>_output.json) by code of its own, and compared within stated tolerances.

#include <string>

#include "verify/checks.hpp"

namespace trainio::verify {

// Checks the run in `folder` into `checks`. Throws a usage error when the folder holds no
// readable trainio summary, and a data error naming the file when a record is missing, cut
// short or damaged.
// Returns what a reader must know beside the figures: that the run is incomplete, and why.
std::string verify_run(const std::string& folder, Checks& checks);

}  // namespace trainio::verify
