#pragma once
// The figures of a training or evaluation phase rebuilt from the records and step lists of every
// rank, by the formulas docs/metrics.md states: DLIO's block AU and throughput from each block's
// step lists and recorded span, trainio's exact window, and the sums, maxima and merged
// distributions across ranks.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "verify/records.hpp"
#include "verify/step_lists.hpp"

namespace trainio::verify {

// DLIO's formulas over a block of steps lasting `duration` seconds.
struct Window {
  std::uint64_t steps = 0;
  bool degenerate = false;  // no step left after the exclusions
  std::optional<double> au, throughput_dlio;
  double throughput = 0;    // trainio's exact window
};
Window window_of(const StepBlock& b, double duration, std::uint64_t batch, std::uint64_t s, std::uint64_t e, bool train);

// One rank's phase.
struct RankPhase {
  int rank = 0, host = 0;
  std::uint64_t steps = 0, samples = 0, bytes_read = 0;
  double duration = 0;
  std::optional<double> au, throughput_dlio;
  double throughput = 0;
  bool degenerate = false;
  double cpu_user = 0, cpu_sys = 0, cpu_polling = 0;
  // Its steps' batch wait, compute and barrier over the phase (seconds): the sums of its step
  // lists' values, each in whole nanoseconds.
  double batch_wait = 0, compute = 0, barrier = 0;
  double own() const { return batch_wait + compute; }
  std::vector<Window> blocks;  // training: per block; evaluation: the one
};

// A phase across ranks, as the ranks' lines are added.
struct PhaseTotals {
  std::string kind;
  std::uint64_t epoch = 0;
  std::vector<RankPhase> ranks;
  std::uint64_t samples = 0, sample_bytes = 0;
  std::uint64_t process_read_bytes = 0, device_read_bytes = 0;
  int process_read_known = 0, device_read_known = 0;
  Io io;
  Tier tier;
  Latency wait, compute, barrier, sample_read;
  // The loaders' reads (all ranks; readers_known: ranks that measured them) and the hosts' CPU
  // ticks over the phase (summed over the ranks that read them).
  int readers_known = 0;
  std::uint64_t reader_threads = 0, max_in_flight = 0, reader_busy_ns = 0, reader_cpu_ns = 0, reader_at_max_ns = 0;
  int run_delay_known = 0;
  std::uint64_t reader_run_delay_ns = 0;
  std::uint64_t host_idle = 0, host_total = 0;

  // Adds one rank's line and its steps (whose lists must match the line's blocks: else a data
  // error naming what differs).
  void add(const RankLine& rank, const PhaseLine& line, const StepPhase& steps);

  std::uint64_t steps() const;
  double duration() const;             // the slowest rank's
  std::optional<double> au() const;    // mean over ranks; a value only when every rank has one
  std::optional<double> throughput_dlio() const;  // sum over ranks; likewise
  double sum(double RankPhase::*field) const;  // over ranks
  double throughput() const { return sum(&RankPhase::throughput); }
  double au_min() const, au_max() const;  // over ranks (a rank without a value counts 0)
  bool degenerate() const;
  std::uint64_t bytes_read() const { return io.bytes_read(); }
  const RankPhase& slowest() const;    // the first rank of the longest own time (batch wait + compute)
  const RankPhase& fastest() const;    // the first of the shortest
  double first_done_bandwidth() const;
  double last_done_bandwidth() const;
  double cpu_user() const { return sum(&RankPhase::cpu_user); }
  double cpu_sys() const { return sum(&RankPhase::cpu_sys); }
  double cpu_polling() const { return sum(&RankPhase::cpu_polling); }
};

// The rank whose batch wait the others waited for at the step-end barrier (docs/metrics.md,
// "Stragglers"); `known` only with more than one rank.
struct StragglerFigures {
  bool known = false, held_others = false;
  int rank = 0, host = 0;
  double batch_wait = 0, others_batch_wait = 0, others_barrier = 0;
};
StragglerFigures straggler_of(const std::vector<RankPhase>& ranks);

// What a phase's reads hit (docs/storage.md's rules).
struct CacheVerdict {
  std::string verdict = "unknown";
  std::optional<double> resident_fraction;
  std::string method;
};
CacheVerdict cache_verdict(const PageCache& c);

}  // namespace trainio::verify
