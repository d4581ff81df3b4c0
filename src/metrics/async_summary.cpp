#include "metrics/async_summary.hpp"

#include <vector>

namespace trainio::metrics {

AsyncSaveSummary summarize_async_save(const CheckpointTimeline& mine, const mpi::Comm& comm) {
  AsyncSaveSummary s;
  s.on = mine.async.on;  // the same on every rank
  if (!s.on) return s;
  s.stall = comm.max(mine.async.stall_seconds());
  s.slot_wait = comm.max(static_cast<double>(mine.async.slot_wait_ns) * 1e-9);
  s.snapshot = comm.max(static_cast<double>(mine.async.snapshot_ns) * 1e-9);
  s.buffer_bytes = static_cast<std::uint64_t>(comm.max(static_cast<std::int64_t>(mine.async.buffer_bytes)));
  return s;
}

namespace {
StepSide side_of(const ReadPhase::StepSums& mine, const mpi::Comm& comm) {
  StepSide s;
  const bool has = mine.steps > 0 && mine.time > 0;
  const double au = has ? 100.0 * mine.compute / mine.time : 0.0;
  const double rate = has ? static_cast<double>(mine.sample_bytes) / mine.time : 0.0;
  const auto counts = comm.sum(std::vector<std::uint64_t>{mine.steps, mine.sample_bytes, has ? 1u : 0u});
  s.steps = counts[0];
  s.sample_bytes = counts[1];
  s.ranks = static_cast<int>(counts[2]);
  const auto sums = comm.sum(std::vector<double>{au, rate});
  if (s.ranks > 0) {
    s.au_percent = sums[0] / s.ranks;
    s.read_bytes_per_second = sums[1];
  }
  return s;
}
}  // namespace

FlushOverlapSummary summarize_flush_overlap(const ReadPhase& mine, const mpi::Comm& comm) {
  FlushOverlapSummary s;
  s.during = side_of(mine.flush_on, comm);
  s.without = side_of(mine.flush_off, comm);
  if (s.during.read_bytes_per_second && s.without.read_bytes_per_second && *s.without.read_bytes_per_second > 0)
    s.read_ratio = *s.during.read_bytes_per_second / *s.without.read_bytes_per_second;
  return s;
}

}  // namespace trainio::metrics
