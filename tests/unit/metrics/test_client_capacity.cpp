#include <catch2/catch.hpp>

#include "metrics/client_capacity.hpp"

using namespace trainio::metrics;

namespace {

// 4 accelerators, 100 steps each of 10 ms compute, 1 MiB read per step, on 2 cores.
CapacityInputs four_ranks() {
  CapacityInputs in;
  in.ranks = 4;
  in.steps = 100;
  in.compute_seconds = 4 * 100 * 0.010;
  in.bytes_read = 4 * 100 * 1048576.0;
  in.cpu_seconds = 1.0;
  in.cpu_polling_seconds = 0.2;
  in.duration_seconds = 2.0;
  in.cores = 2;
  in.host_ticks_idle = 100;  // half idle: 1 core busy, of which 0.5 (cpu / duration) is ours
  in.host_ticks_total = 200;
  in.au_target = 0.9;
  return in;
}

}  // namespace

TEST_CASE("client capacity: the cores left to the client over the CPU one accelerator costs at the AU target") {
  const ClientCapacity c = client_capacity(four_ranks());
  // Demand: 400 MiB over 4 s of compute at 90%: 90 MiB/s per accelerator.
  CHECK(*c.demand_bytes_per_second == Approx(400 * 1048576.0 / (4.0 / 0.9)));
  // Polling is left out of the cost: 0.8 CPU-s for 400 MiB.
  CHECK(*c.cpu_seconds_per_byte == Approx(0.8 / (400 * 1048576.0)));
  CHECK(*c.cpu_seconds_per_step == Approx(0.8 / 400));
  CHECK(*c.cores_per_accelerator == Approx(0.8 / (4.0 / 0.9)));  // 0.18 cores
  CHECK(*c.other_cores_busy == Approx(0.5));                      // 1 busy - our 0.5
  CHECK(*c.available_cores == Approx(1.5));
  REQUIRE(c.accelerators);
  CHECK(*c.accelerators == 11);  // floor(2 / 0.18)
  CHECK(*c.accelerators_beside_others == 8);  // floor(1.5 / 0.18)
}

TEST_CASE("client capacity: null with the reason when the run cannot tell") {
  CapacityInputs in = four_ranks();
  in.bytes_read = 0;
  ClientCapacity c = client_capacity(in);
  CHECK_FALSE(c.accelerators);
  CHECK(c.reason.find("no reads") != std::string::npos);
  in = four_ranks();
  in.compute_seconds = 0;
  c = client_capacity(in);
  CHECK_FALSE(c.accelerators);
  CHECK(c.reason.find("no compute") != std::string::npos);
  in = four_ranks();
  in.host_ticks_total = 0;  // other processes' use unknown: all the cores count
  c = client_capacity(in);
  REQUIRE(c.accelerators);
  CHECK(*c.accelerators == 11);  // floor(2 / 0.18)
  CHECK(*c.accelerators_beside_others == 11);
  CHECK(c.reason.find("unknown") != std::string::npos);
}
