#pragma once
// What limited a read phase (docs/metrics.md, "The bottleneck verdict"): one verdict per phase
// and epoch, from measured evidence only, by rules checked in order. trainio verify rebuilds the
// evidence from the records and applies the same documented rules with code of its own.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "metrics/read_depth.hpp"

namespace trainio::metrics {

struct PhaseSummary;

// The thresholds of the rules (docs/metrics.md states each).
namespace bottleneck_rule {
inline constexpr double kStragglerBarrierShare = 0.1;  // others' barrier wait / mean step time
inline constexpr double kComputeWaitShare = 0.1;       // batch wait below this share of step time: compute
inline constexpr double kComputeShare = 0.5;           // ... and compute at least this share
inline constexpr double kReaderCpuBound = 0.7;         // (reader CPU + run delay) / reader busy time: CPU-bound threads
inline constexpr double kHostIdleSaturated = 0.1;      // the ranks' CPUs' idle share below this: saturated
inline constexpr double kStorageWaitShare = 0.5;       // storage-call time / reader busy time
inline constexpr double kLatencyRise = 1.5;            // mean latency, deepest band / shallowest
inline constexpr double kAtMaxShare = 0.8;             // reads in flight at the maximum, share of the phase
inline constexpr std::uint64_t kBandCalls = 8;         // calls a depth band needs to count
}  // namespace bottleneck_rule

// The evidence, across the phase's ranks.
struct BottleneckEvidence {
  int ranks = 1;
  double duration = 0;                          // the phase (slowest rank's)
  double batch_wait = 0, compute = 0, barrier = 0;  // seconds, all ranks
  bool straggler_held = false;
  int straggler_rank = 0;
  double straggler_others_barrier = 0;          // the others' mean barrier wait
  std::string cache_verdict;                    // metrics::page_cache_verdict's name
  std::optional<double> resident_fraction;
  bool readers_known = false;                   // every rank's loader measured its reads
  std::uint64_t reader_threads = 0, max_in_flight = 0;  // all ranks
  double reader_busy = 0, reader_cpu = 0, reader_at_max = 0;  // seconds, all ranks
  std::optional<double> reader_run_delay;       // seconds runnable but waiting for a CPU, all ranks
  double storage_read = 0;                      // seconds in read calls on data files, all ranks
  double cpu = 0, cpu_polling = 0;              // the processes' CPU seconds, and of them polling
  std::optional<double> host_idle;              // idle share of the ranks' CPUs (/proc/stat, all processes)
  ReadDepth depth;
};

struct BottleneckVerdict {
  std::string verdict;  // compute, storage, client_cpu, concurrency, straggler, page_cache, unknown
  std::string reason;   // one sentence with the figures that decided it
  // Derived figures the verdict rests on (absent: not measured).
  double batch_wait_share = 0, compute_share = 0, barrier_share = 0;  // of step time
  std::optional<double> reader_busy_share;    // reader busy / (threads x duration)
  std::optional<double> reader_cpu_share;     // reader CPU / reader busy
  // (reader CPU + run delay) / reader busy: above 1 where readers waited for a core between
  // batches (the run delay is the whole phase's, busy time only around batches).
  std::optional<double> reader_cpu_and_run_delay_per_busy;
  std::optional<double> storage_wait_share;   // storage-call time / reader busy
  std::optional<double> at_max_share;         // time at max in flight / (ranks x duration)
  std::optional<double> latency_shallow, latency_deep;  // seconds per call, shallowest and deepest band
  std::uint32_t depth_shallow = 0, depth_deep = 0;      // their lowest depths
  std::string cpu_burner;                     // readers, polling, other (client_cpu)
};

BottleneckVerdict decide_bottleneck(const BottleneckEvidence& e);
BottleneckEvidence bottleneck_evidence(const PhaseSummary& p);

}  // namespace trainio::metrics
