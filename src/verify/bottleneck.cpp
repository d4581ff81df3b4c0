#include "verify/bottleneck.hpp"

#include <algorithm>

namespace trainio::verify {

RebuiltBottleneck rebuild_bottleneck(const PhaseTotals& t) {
  RebuiltBottleneck b;
  const double ranks = static_cast<double>(std::max<std::size_t>(1, t.ranks.size()));
  const double duration = t.duration();
  const double wait = static_cast<double>(t.wait.sum()) * 1e-9, compute = static_cast<double>(t.compute.sum()) * 1e-9,
               barrier = static_cast<double>(t.barrier.sum()) * 1e-9;
  const double step = wait + compute + barrier;
  if (step > 0) {
    b.batch_wait_share = wait / step;
    b.compute_share = compute / step;
    b.barrier_share = barrier / step;
  }
  const CacheVerdict cache = cache_verdict(t.io.page_cache);
  b.cache = cache.verdict;
  b.readers = !t.ranks.empty() && t.readers_known == static_cast<int>(t.ranks.size());
  b.reader_threads = t.reader_threads;
  b.max_in_flight = t.max_in_flight;
  b.reader_busy = static_cast<double>(t.reader_busy_ns) * 1e-9;
  b.reader_cpu = static_cast<double>(t.reader_cpu_ns) * 1e-9;
  if (b.readers && t.reader_threads > 0 && duration > 0) b.reader_busy_share = b.reader_busy / (static_cast<double>(t.reader_threads) * duration);
  double storage = 0;
  for (const char* op : {"read", "touch"})
    if (const auto it = t.io.ops.find(op); it != t.io.ops.end()) storage += static_cast<double>(it->second.ns) * 1e-9;
  if (b.readers && t.run_delay_known == static_cast<int>(t.ranks.size()))
    b.reader_run_delay = static_cast<double>(t.reader_run_delay_ns) * 1e-9;
  if (b.readers && b.reader_busy > 0) {
    b.reader_cpu_share = b.reader_cpu / b.reader_busy;
    b.reader_cpu_and_run_delay_per_busy = (b.reader_cpu + b.reader_run_delay.value_or(0)) / b.reader_busy;
    b.storage_wait_share = storage / b.reader_busy;
  }
  if (b.readers && duration > 0) b.at_max_share = static_cast<double>(t.reader_at_max_ns) * 1e-9 / (ranks * duration);
  if (t.host_total > 0) b.host_idle = static_cast<double>(t.host_idle) / static_cast<double>(t.host_total);
  b.cpu = t.cpu_user() + t.cpu_sys();
  b.cpu_polling = t.cpu_polling();
  for (const auto& [from, d] : t.io.read_depth)
    if (d.first > 0) b.bands.push_back({from, d.first, static_cast<double>(d.second) * 1e-9 / static_cast<double>(d.first)});
  // The shallowest and deepest bands of at least 8 calls.
  const RebuiltBottleneck::Band* shallow = nullptr;
  const RebuiltBottleneck::Band* deep = nullptr;
  for (const auto& band : b.bands)
    if (band.calls >= 8) {
      if (!shallow) shallow = &band;
      deep = &band;
    }

  // The rules, in order (docs/metrics.md).
  if (step <= 0) return b.verdict = "unknown", b;
  const StragglerFigures st = straggler_of(t.ranks);
  if (st.known && st.held_others && st.others_barrier >= 0.1 * step / ranks) return b.verdict = "straggler", b;
  if (b.batch_wait_share < 0.1) return b.verdict = b.compute_share >= 0.5 ? "compute" : "unknown", b;
  if (b.cache == "page_cache") return b.verdict = "page_cache", b;
  const bool saturated = b.host_idle && *b.host_idle < 0.1;
  const bool cpu_bound = b.reader_cpu_and_run_delay_per_busy && *b.reader_cpu_and_run_delay_per_busy >= 0.7;
  const bool starved = saturated && (!b.storage_wait_share || *b.storage_wait_share < 0.5);
  if (cpu_bound || starved) {
    const double readers = b.readers ? b.reader_cpu : 0, other = std::max(0.0, b.cpu - readers - b.cpu_polling);
    b.cpu_burner = readers >= std::max(b.cpu_polling, other) ? "readers" : b.cpu_polling >= other ? "polling" : "other";
    return b.verdict = "client_cpu", b;
  }
  if (!b.storage_wait_share || *b.storage_wait_share < 0.5) return b.verdict = "unknown", b;
  if (shallow && deep->depth_from > shallow->depth_from && deep->mean_seconds >= 1.5 * shallow->mean_seconds)
    return b.verdict = "storage", b;
  if (shallow && b.at_max_share && *b.at_max_share >= 0.8) return b.verdict = "concurrency", b;
  return b.verdict = "unknown", b;
}

}  // namespace trainio::verify
