#pragma once
// summary.json's blocks for what a phase did (an epoch's reads, an evaluation, generation) and
// for a checkpoint: figures, latency histograms, storage calls, the access profile, stragglers,
// client cost and the page-cache verdict.

#include <nlohmann/json.hpp>

#include <optional>

#include "metrics/summary.hpp"
#include "report/context.hpp"

namespace trainio::report {

// A figure that may have no value: null then (summary.json's notes say why).
nlohmann::ordered_json maybe(const std::optional<double>& v, double scale = 1);
// A latency histogram: count, mean, p50, p90, p99, p99.9 and max, in seconds.
nlohmann::ordered_json latency_json(const metrics::Histogram& h);
// Every storage call kind used: count, bytes, seconds and latency percentiles.
nlohmann::ordered_json io_json(const metrics::IoRecorder& io);
// Requests to an object store: by kind and status, retries, time to first byte and in all.
nlohmann::ordered_json requests_json(const metrics::RequestStats& r);
// Darshan's view of the calls: sizes, sequential and consecutive shares, files.
nlohmann::ordered_json characterization_json(const metrics::IoRecorder& io);
// What the reads hit (docs/storage.md): the verdict, and the evidence it rests on.
nlohmann::ordered_json page_cache_json(const metrics::PageCacheStats& c);
// What a cache tier did (docs/caching.md); `seconds`: the phase's duration.
nlohmann::ordered_json tier_json(const metrics::TierStats& t);
nlohmann::ordered_json phase_json(const metrics::PhaseSummary& p, const RunContext& context);
nlohmann::ordered_json checkpoint_json(const metrics::CheckpointSummary& c);

}  // namespace trainio::report
