#pragma once
// What a person sees on rank 0's terminal: a line per epoch while running, a table at the end.

#include <optional>
#include <string>
#include <vector>

#include "config/workload.hpp"
#include "metrics/summary.hpp"
#include "plan/run_plan.hpp"
#include "report/context.hpp"

namespace trainio::report {

// "256 files written, 0 kept, 1.00 GiB written in 1.45 s (706 MiB/s), durable after 2.20 s (465 MiB/s)":
// the slowest rank's time to write its files, and until they were on stable storage.
std::string generation_line(const metrics::GenerateSummary& g);

std::string epoch_line(const metrics::EpochSummary& e, std::uint64_t epochs, double nominal_record_bytes);

// A phase's requests to S3 (docs/s3.md): "S3 1234 requests (412.0/s), first byte p50 1.2 ms p99
// 8.1 ms, 3 retries after 503 x3, HTTP 206 x1234"; the rate is the requests over the phase's
// duration (its slowest rank's), the statuses are the requests' final answers. Empty without
// requests.
std::string s3_figures(const metrics::RequestStats& r, double seconds);

// "checkpoint save 3/10 (global_epoch1_step3): 104.70 GiB in 41.2 s, 2.54 GiB/s ..."; `of` 0 when
// the number of checkpoints is not known in advance (training mode).
std::string checkpoint_line(const metrics::CheckpointSummary& c, std::uint64_t of);
// "start to first checkpoint read: 0.41 s (slowest rank 1); failover gap 12.3 s after the write
// job ended (MLPerf allows 30 s)"; empty when the run read no checkpoint.
std::string startup_line(const metrics::StartupSummary& s, const std::optional<Failover>& failover);

// `hostnames`: the run's hosts by host index (the straggler's line names its host).
std::string final_table(const config::Workload& w, const plan::DatasetLayout& layout, const metrics::RunSummary& run,
                        const std::string& summary_path, const std::vector<std::string>& hostnames = {});

}  // namespace trainio::report
