// The bottleneck verdict verify rebuilds from the records (verify/bottleneck.hpp), rule by rule in
// docs/metrics.md's order: unknown without steps, straggler, compute, page cache, client CPU,
// storage (latency growing with depth), concurrency.
#include <catch2/catch.hpp>

#include "verify/bottleneck.hpp"

using namespace trainio::verify;

namespace {

constexpr std::uint64_t kSecond = 1'000'000'000ULL;

// One rank's phase of 10 s: batch wait, compute and barrier (seconds), its readers busy all of it
// (2 threads), 1 GiB read with buffered calls that took `storage` seconds, nothing probed.
PhaseTotals phase(double wait, double compute, double barrier, double storage = 0) {
  PhaseTotals t;
  RankPhase r;
  r.duration = 10;
  r.batch_wait = wait;
  r.compute = compute;
  r.barrier = barrier;
  t.ranks = {r};
  t.wait.add_totals(1, static_cast<std::uint64_t>(wait * kSecond), 0, 0);
  t.compute.add_totals(1, static_cast<std::uint64_t>(compute * kSecond), 0, 0);
  t.barrier.add_totals(1, static_cast<std::uint64_t>(barrier * kSecond), 0, 0);
  t.readers_known = 1;
  t.run_delay_known = 1;
  t.reader_threads = 2;
  t.max_in_flight = 2;
  t.reader_busy_ns = 20 * kSecond;
  t.reader_cpu_ns = 2 * kSecond;
  t.io.ops["read"].ns = static_cast<std::uint64_t>(storage * kSecond);
  t.io.ops["read"].bytes = 1ULL << 30;
  t.io.page_cache.read_bytes = 1ULL << 30;
  return t;
}

}  // namespace

TEST_CASE("no step time: unknown") {
  PhaseTotals t;
  CHECK(rebuild_bottleneck(t).verdict == "unknown");
}

TEST_CASE("step shares, and compute when the loop barely waited for batches") {
  const RebuiltBottleneck b = rebuild_bottleneck(phase(0.5, 9, 0.5));
  CHECK(b.batch_wait_share == Approx(0.05));
  CHECK(b.compute_share == Approx(0.9));
  CHECK(b.barrier_share == Approx(0.05));
  CHECK(b.verdict == "compute");
  CHECK(rebuild_bottleneck(phase(0.5, 4, 5.5)).verdict == "unknown");  // neither waiting nor computing
}

TEST_CASE("a rank that held the others at the barrier is the verdict before anything else") {
  PhaseTotals t = phase(5, 4, 1, 18);
  RankPhase slow = t.ranks[0], fast = t.ranks[0];
  slow.rank = 1;
  slow.batch_wait = 4;
  slow.barrier = 0;
  fast.batch_wait = 0.5;
  fast.barrier = 3.5;
  t.ranks = {fast, slow};
  t.readers_known = 2;
  CHECK(rebuild_bottleneck(t).verdict == "straggler");
}

TEST_CASE("waits on reads the page cache served are the page cache's, not the storage's") {
  PhaseTotals t = phase(5, 4, 1, 18);
  t.io.page_cache.probes = 10;
  t.io.page_cache.probed_pages = 100;
  t.io.page_cache.resident_pages = 95;
  t.io.page_cache.method = "cachestat";
  const RebuiltBottleneck b = rebuild_bottleneck(t);
  CHECK(b.cache == "page_cache");
  CHECK(b.verdict == "page_cache");
}

TEST_CASE("readers busy on the CPU, or a host with no idle time: client CPU, and who burned it") {
  PhaseTotals t = phase(5, 4, 1, 2);
  t.reader_cpu_ns = 15 * kSecond;  // 75% of their busy time on the CPU
  RebuiltBottleneck b = rebuild_bottleneck(t);
  CHECK(*b.reader_cpu_share == Approx(0.75));
  CHECK(b.verdict == "client_cpu");
  CHECK(b.cpu_burner == "readers");

  t = phase(5, 4, 1, 2);
  t.reader_run_delay_ns = 13 * kSecond;  // waiting for a core counts with the CPU time: (2 + 13) / 20
  b = rebuild_bottleneck(t);
  CHECK(*b.reader_cpu_and_run_delay_per_busy == Approx(0.75));
  CHECK(b.verdict == "client_cpu");

  t = phase(5, 4, 1, 2);
  t.host_idle = 5;
  t.host_total = 100;  // 5% idle and little storage wait: starved of CPU
  t.ranks[0].cpu_polling = 6;
  t.ranks[0].cpu_user = 9;
  b = rebuild_bottleneck(t);
  CHECK(*b.host_idle == Approx(0.05));
  CHECK(b.verdict == "client_cpu");
  CHECK(b.cpu_burner == "polling");  // 6 s polling against 2 s of readers and 1 s else
}

TEST_CASE("storage when a read's latency grows with the depth it was issued at") {
  PhaseTotals t = phase(5, 4, 1, 18);  // storage calls 90% of the readers' busy time
  t.io.read_depth[1] = {100, 100 * 1'000'000ULL};  // 1 ms at depth 1
  t.io.read_depth[8] = {100, 100 * 2'000'000ULL};  // 2 ms at depth 8 and more
  RebuiltBottleneck b = rebuild_bottleneck(t);
  REQUIRE(b.bands.size() == 2);
  CHECK(b.bands[1].mean_seconds == Approx(0.002));
  CHECK(*b.storage_wait_share == Approx(0.9));
  CHECK(b.verdict == "storage");
  // Flat latency, and the readers at their most in flight 80% of the time or more: concurrency.
  t.io.read_depth[8] = {100, 100 * 1'200'000ULL};
  t.reader_at_max_ns = 8 * kSecond;
  b = rebuild_bottleneck(t);
  CHECK(*b.at_max_share == Approx(0.8));
  CHECK(b.verdict == "concurrency");
  // Neither: unknown. Bands of fewer than 8 calls do not count.
  t.reader_at_max_ns = 7 * kSecond;
  CHECK(rebuild_bottleneck(t).verdict == "unknown");
  t.io.read_depth[8] = {7, 7 * 9'000'000ULL};
  t.reader_at_max_ns = 0;
  CHECK(rebuild_bottleneck(t).verdict == "unknown");
}

TEST_CASE("waiting on neither CPU nor storage calls: unknown") {
  CHECK(rebuild_bottleneck(phase(5, 4, 1, 4)).verdict == "unknown");  // storage 20% of busy time
}
