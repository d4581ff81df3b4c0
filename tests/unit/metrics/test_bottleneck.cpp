// The bottleneck verdict's rules (docs/metrics.md), one case per verdict and the cases between.
#include <catch2/catch.hpp>

#include "metrics/bottleneck.hpp"

using trainio::metrics::BottleneckEvidence;
using trainio::metrics::decide_bottleneck;

namespace {

// One rank, 10 s of steps; readers measured: 1 thread busy the whole phase.
BottleneckEvidence input_bound() {
  BottleneckEvidence e;
  e.duration = 10;
  e.batch_wait = 6;
  e.compute = 4;
  e.cache_verdict = "storage";
  e.readers_known = true;
  e.reader_threads = 1;
  e.max_in_flight = 1;
  e.reader_busy = 10;
  e.reader_cpu = 0.5;
  e.reader_at_max = 9.5;
  e.storage_read = 9;
  e.host_idle = 0.6;
  return e;
}

void band(BottleneckEvidence& e, std::size_t b, std::uint64_t calls, double mean_seconds) {
  e.depth.calls[b] = calls;
  e.depth.ns[b] = static_cast<std::uint64_t>(static_cast<double>(calls) * mean_seconds * 1e9);
}

}  // namespace

TEST_CASE("batches that hardly wait make the phase compute-bound, unless the barrier took the time") {
  BottleneckEvidence e = input_bound();
  e.batch_wait = 0.5;
  e.compute = 9.5;
  CHECK(decide_bottleneck(e).verdict == "compute");
  e.compute = 2;
  e.barrier = 7.5;
  CHECK(decide_bottleneck(e).verdict == "unknown");
  CHECK_THAT(decide_bottleneck(e).reason, Catch::Contains("no straggler"));
}

TEST_CASE("a straggler that held the others comes first") {
  BottleneckEvidence e = input_bound();
  e.ranks = 2;
  e.batch_wait = 6;
  e.barrier = 5;
  e.compute = 8;
  e.straggler_held = true;
  e.straggler_rank = 1;
  e.straggler_others_barrier = 5;
  CHECK(decide_bottleneck(e).verdict == "straggler");
  e.straggler_others_barrier = 0.5;  // under 10% of the mean step time (9.5 s)
  CHECK(decide_bottleneck(e).verdict != "straggler");
}

TEST_CASE("reads from the page cache say nothing about the storage") {
  BottleneckEvidence e = input_bound();
  e.cache_verdict = "page_cache";
  e.reader_cpu = 9.5;
  CHECK(decide_bottleneck(e).verdict == "page_cache");
}

TEST_CASE("readers on a CPU, or starved of one, make the client the limit") {
  BottleneckEvidence e = input_bound();
  e.reader_cpu = 8;  // 80% of their busy time
  e.storage_read = 1;
  auto v = decide_bottleneck(e);
  CHECK(v.verdict == "client_cpu");
  CHECK(v.cpu_burner == "readers");
  e = input_bound();
  e.reader_run_delay = 7;  // runnable, waiting for a CPU 70% of their busy time
  v = decide_bottleneck(e);
  CHECK(v.verdict == "client_cpu");
  CHECK(*v.reader_cpu_and_run_delay_per_busy == Approx(0.75));
  e = input_bound();
  e.host_idle = 0.02;
  e.storage_read = 3;  // the rest of their time waiting for a CPU
  CHECK(decide_bottleneck(e).verdict == "client_cpu");
  e.storage_read = 9;  // saturated CPUs, but the readers waited in storage calls
  band(e, 0, 100, 0.005);
  CHECK(decide_bottleneck(e).verdict == "concurrency");
}

TEST_CASE("latency rising with depth is the storage; flat with reads at the maximum is concurrency") {
  BottleneckEvidence e = input_bound();
  band(e, 0, 50, 0.005);
  band(e, 2, 400, 0.020);
  auto v = decide_bottleneck(e);
  CHECK(v.verdict == "storage");
  CHECK(v.depth_shallow == 1);
  CHECK(v.depth_deep == 3);
  CHECK(*v.latency_deep == Approx(0.020).epsilon(1e-6));
  band(e, 2, 400, 0.006);
  CHECK(decide_bottleneck(e).verdict == "concurrency");
  e.reader_at_max = 2;  // in flight at the maximum 20% of the time
  CHECK(decide_bottleneck(e).verdict == "unknown");
  band(e, 0, 5, 0.005);  // too few calls at depth 1 to compare: one band left
  band(e, 2, 400, 0.020);
  e.reader_at_max = 9.5;
  CHECK(decide_bottleneck(e).verdict == "concurrency");
}

TEST_CASE("without the readers' times or the depths, the verdict says what is missing") {
  BottleneckEvidence e = input_bound();
  e.readers_known = false;
  CHECK(decide_bottleneck(e).verdict == "unknown");
  CHECK_THAT(decide_bottleneck(e).reason, Catch::Contains("does not measure"));
  e = input_bound();
  CHECK(decide_bottleneck(e).verdict == "unknown");  // no depth band
  CHECK_THAT(decide_bottleneck(e).reason, Catch::Contains("by depth was not"));
  e.storage_read = 2;
  CHECK_THAT(decide_bottleneck(e).reason, Catch::Contains("only 20%"));
  CHECK(decide_bottleneck(BottleneckEvidence{}).verdict == "unknown");
}

TEST_CASE("the readers' wait for a CPU is told against their time in the phase, never over 100%") {
  // The kernel's run delay covers the whole phase, idle waits for work included, so it may exceed
  // the readers' busy time: 2 threads busy 3 s of a 10 s phase, waiting for a CPU 4 s in all.
  BottleneckEvidence e = input_bound();
  e.reader_threads = 2;
  e.reader_busy = 3;
  e.reader_cpu = 2.5;
  e.storage_read = 0.3;
  e.reader_run_delay = 4;
  const auto v = decide_bottleneck(e);
  CHECK(v.verdict == "client_cpu");
  CHECK_THAT(v.reason, Catch::Contains("ran on a CPU 83% of their busy time"));
  CHECK_THAT(v.reason, Catch::Contains("waiting for a CPU 20% of their time in the phase"));
  CHECK_THAT(v.reason, !Catch::Contains("133%"));
}
