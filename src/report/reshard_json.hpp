#pragma once
// summary.json's figures of a load on another layout than the save's (docs/checkpoints.md,
// "Restart on another layout"), and the console's line of them.

#include <nlohmann/json.hpp>

#include <string>

#include "metrics/summary.hpp"

namespace trainio::report {

nlohmann::ordered_json reshard_json(const metrics::ReshardSummary& r);
// "  resharded: saved tensor 2 x pipeline 1 x data 2 (4 ranks), loaded tensor 1 x pipeline 1 x data 2 (2 ranks); read
// 1.000x the shards (...); 4 files, 1-2 readers each (mean 1.50)".
std::string reshard_line(const metrics::ReshardSummary& r);

}  // namespace trainio::report
