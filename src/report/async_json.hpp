#pragma once
// summary.json's figures of asynchronous checkpoints (checkpoint.async, docs/checkpoints.md):
// each save's stall, each epoch's steps with and without a flush running, the run's totals, and
// the console's line of them.

#include <nlohmann/json.hpp>

#include <string>

#include "config/workload.hpp"
#include "metrics/summary.hpp"

namespace trainio::report {

nlohmann::ordered_json async_save_json(const metrics::CheckpointSummary& c);
nlohmann::ordered_json flush_overlap_json(const metrics::FlushOverlapSummary& f);
// trainio.checkpoint.async: the settings and every save's stall together; null when saves are synchronous.
nlohmann::ordered_json async_totals_json(const config::Workload& w, const metrics::RunSummary& run);
// One console line per save ("stalled training 0.12 s (snapshot 0.10 s, slot wait 0.02 s); flushed ...").
std::string async_save_line(const metrics::CheckpointSummary& c);
// One console line per epoch with flush overlap ("" when no step overlapped a flush).
std::string flush_overlap_line(std::uint64_t epoch, const metrics::FlushOverlapSummary& f);

}  // namespace trainio::report
