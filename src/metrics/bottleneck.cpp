#include "metrics/bottleneck.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "metrics/summary.hpp"

namespace trainio::metrics {

namespace r = bottleneck_rule;

BottleneckEvidence bottleneck_evidence(const PhaseSummary& p) {
  BottleneckEvidence e;
  e.ranks = std::max(1, p.rank_count);
  e.duration = p.duration;
  e.batch_wait = p.wait_ns.sum() * 1e-9;
  e.compute = p.compute_ns.sum() * 1e-9;
  e.barrier = p.barrier_ns.sum() * 1e-9;
  e.straggler_held = p.straggler.known && p.straggler.held_others;
  e.straggler_rank = p.straggler.rank;
  e.straggler_others_barrier = p.straggler.others_barrier;
  const PageCacheVerdict cache = page_cache_verdict(p.io.page_cache());
  e.cache_verdict = verdict_name(cache.verdict);
  e.resident_fraction = cache.resident_fraction;
  e.readers_known = p.readers_known;
  e.reader_threads = p.reader_threads;
  e.max_in_flight = p.reader_max_in_flight;
  e.reader_busy = static_cast<double>(p.reader_busy_ns) * 1e-9;
  e.reader_cpu = static_cast<double>(p.reader_cpu_ns) * 1e-9;
  e.reader_at_max = static_cast<double>(p.reader_at_max_ns) * 1e-9;
  if (p.readers_known && p.run_delay_known) e.reader_run_delay = static_cast<double>(p.reader_run_delay_ns) * 1e-9;
  e.storage_read = static_cast<double>(p.io.op(storage::Op::read).ns + p.io.op(storage::Op::touch).ns) * 1e-9;
  e.cpu = p.cpu_user + p.cpu_sys;
  e.cpu_polling = p.cpu_polling;
  if (p.host_ticks_total > 0) e.host_idle = static_cast<double>(p.host_ticks_idle) / static_cast<double>(p.host_ticks_total);
  e.depth = p.io.read_depth();
  return e;
}

BottleneckVerdict decide_bottleneck(const BottleneckEvidence& e) {
  BottleneckVerdict v;
  const double step = e.batch_wait + e.compute + e.barrier;
  auto verdict = [&](const char* name, std::string why) {
    v.verdict = name;
    v.reason = std::move(why);
    return v;
  };
  if (step > 0) {
    v.batch_wait_share = e.batch_wait / step;
    v.compute_share = e.compute / step;
    v.barrier_share = e.barrier / step;
  }
  const double slots = static_cast<double>(e.reader_threads) * e.duration;
  if (e.readers_known && slots > 0) v.reader_busy_share = e.reader_busy / slots;
  if (e.readers_known && e.reader_busy > 0) {
    v.reader_cpu_share = e.reader_cpu / e.reader_busy;
    v.reader_cpu_and_run_delay_per_busy = (e.reader_cpu + e.reader_run_delay.value_or(0)) / e.reader_busy;
    v.storage_wait_share = e.storage_read / e.reader_busy;
  }
  if (e.readers_known && e.duration > 0) v.at_max_share = e.reader_at_max / (e.ranks * e.duration);
  // Latency against depth: the shallowest and deepest bands with enough calls.
  int shallow = -1, deep = -1;
  for (std::size_t b = 0; b < ReadDepth::kBands; ++b) {
    if (e.depth.calls[b] < r::kBandCalls) continue;
    if (shallow < 0) shallow = static_cast<int>(b);
    deep = static_cast<int>(b);
  }
  if (shallow >= 0) {
    const auto mean = [&](int b) { return static_cast<double>(e.depth.ns[b]) * 1e-9 / static_cast<double>(e.depth.calls[b]); };
    v.latency_shallow = mean(shallow);
    v.latency_deep = mean(deep);
    v.depth_shallow = ReadDepth::kLowest[static_cast<std::size_t>(shallow)];
    v.depth_deep = ReadDepth::kLowest[static_cast<std::size_t>(deep)];
  }
  if (step <= 0) return verdict("unknown", "the phase has no step time");
  const double mean_step = step / e.ranks;
  if (e.straggler_held && e.straggler_others_barrier >= r::kStragglerBarrierShare * mean_step)
    return verdict("straggler", fmt::format("the other ranks waited at the barrier for rank {}'s batches, {:.1f}% of the mean step time",
                                            e.straggler_rank, 100 * e.straggler_others_barrier / mean_step));
  if (v.batch_wait_share < r::kComputeWaitShare) {
    if (v.compute_share >= r::kComputeShare)
      return verdict("compute", fmt::format("batches waited {:.1f}% of step time; compute took {:.1f}%", 100 * v.batch_wait_share,
                                            100 * v.compute_share));
    return verdict("unknown", fmt::format("batches waited {:.1f}% of step time and compute took {:.1f}%: the barrier ({:.1f}%) "
                                          "took the rest, with no straggler", 100 * v.batch_wait_share, 100 * v.compute_share,
                                          100 * v.barrier_share));
  }
  if (e.cache_verdict == "page_cache")
    return verdict("page_cache", fmt::format("batches waited {:.1f}% of step time, but the reads came from this host's page cache "
                                             "({:.0f}% resident): the run says nothing about the storage",
                                             100 * v.batch_wait_share, 100 * e.resident_fraction.value_or(1)));
  const bool saturated = e.host_idle && *e.host_idle < r::kHostIdleSaturated;
  // On a CPU or waiting for one (the run delay; the CPU time alone where the kernel does not say).
  const bool cpu_bound = v.reader_cpu_and_run_delay_per_busy && *v.reader_cpu_and_run_delay_per_busy >= r::kReaderCpuBound;
  // Saturated CPUs limit the readers only if their time went elsewhere than storage calls: to a
  // CPU, or to waiting for one.
  const bool starved = saturated && (!v.storage_wait_share || *v.storage_wait_share < r::kStorageWaitShare);
  if (cpu_bound || starved) {
    const double readers = e.readers_known ? e.reader_cpu : 0, other = std::max(0.0, e.cpu - readers - e.cpu_polling);
    v.cpu_burner = readers >= std::max(e.cpu_polling, other) ? "readers" : e.cpu_polling >= other ? "polling" : "other";
    // The run delay is the kernel's over the whole phase, idle waits for work included: it is
    // told against the threads' time in the phase, not their busy time, which it can exceed.
    const double slots = static_cast<double>(e.reader_threads) * e.duration;
    const std::string waiting = e.reader_run_delay && slots > 0
                                    ? fmt::format(", and were runnable but waiting for a CPU {:.0f}% of their time in the phase",
                                                  100 * *e.reader_run_delay / slots)
                                    : std::string();
    return verdict("client_cpu",
                   cpu_bound ? fmt::format("batches waited {:.1f}% of step time while reader threads ran on a CPU {:.0f}% of their busy time{}",
                                           100 * v.batch_wait_share, 100 * *v.reader_cpu_share, waiting)
                             : fmt::format("batches waited {:.1f}% of step time while the CPUs the ranks may run on were {:.0f}% idle (all processes on them)",
                                           100 * v.batch_wait_share, 100 * *e.host_idle));
  }
  if (!v.storage_wait_share)
    return verdict("unknown", fmt::format("batches waited {:.1f}% of step time; this loader does not measure its readers' time",
                                          100 * v.batch_wait_share));
  if (*v.storage_wait_share < r::kStorageWaitShare)
    return verdict("unknown", fmt::format("batches waited {:.1f}% of step time, but readers spent only {:.0f}% of their busy time in "
                                          "storage calls and {:.0f}% on a CPU", 100 * v.batch_wait_share, 100 * *v.storage_wait_share,
                                          100 * v.reader_cpu_share.value_or(0)));
  if (v.latency_shallow && v.depth_deep > v.depth_shallow && *v.latency_deep >= r::kLatencyRise * *v.latency_shallow)
    return verdict("storage", fmt::format("readers spent {:.0f}% of their busy time in storage calls, and a read took {:.2f} ms at "
                                          "depth {}+ against {:.2f} ms at depth {}+: latency rises with load",
                                          100 * *v.storage_wait_share, 1e3 * *v.latency_deep, v.depth_deep, 1e3 * *v.latency_shallow,
                                          v.depth_shallow));
  if (!v.latency_shallow)
    return verdict("unknown", fmt::format("readers spent {:.0f}% of their busy time in storage calls; read latency by depth was not "
                                          "measured (mmap, io_uring or too few reads)", 100 * *v.storage_wait_share));
  if (v.at_max_share && *v.at_max_share >= r::kAtMaxShare)
    return verdict("concurrency",
                   fmt::format("readers spent {:.0f}% of their busy time in storage calls with reads in flight at the maximum ({}) "
                               "{:.0f}% of the time, and latency {}: more parallelism would help",
                               100 * *v.storage_wait_share, e.max_in_flight, 100 * *v.at_max_share,
                               v.depth_deep > v.depth_shallow
                                   ? fmt::format("flat ({:.2f} ms at depth {}+, {:.2f} ms at depth {}+)", 1e3 * *v.latency_shallow,
                                                 v.depth_shallow, 1e3 * *v.latency_deep, v.depth_deep)
                                   : fmt::format("{:.2f} ms, every counted read at depth {}+ (no sign of a saturated storage)",
                                                 1e3 * *v.latency_shallow, v.depth_shallow)));
  return verdict("unknown", fmt::format("readers spent {:.0f}% of their busy time in storage calls, but reads in flight were at the "
                                        "maximum only {:.0f}% of the time and latency did not rise with depth",
                                        100 * *v.storage_wait_share, 100 * v.at_max_share.value_or(0)));
}

}  // namespace trainio::metrics
