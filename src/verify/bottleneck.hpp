#pragma once
// The bottleneck verdict of a phase rebuilt from the records by docs/metrics.md's rules ("The
// bottleneck verdict"), written apart from metrics/bottleneck.cpp on purpose: verify checks that
// code against the documented rules, not against itself.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "verify/phase_figures.hpp"

namespace trainio::verify {

struct RebuiltBottleneck {
  std::string verdict;
  double batch_wait_share = 0, compute_share = 0, barrier_share = 0;
  std::optional<double> reader_run_delay, reader_cpu_and_run_delay_per_busy;
  std::optional<double> reader_busy_share, reader_cpu_share, storage_wait_share, at_max_share, host_idle;
  bool readers = false;
  std::uint64_t reader_threads = 0, max_in_flight = 0;
  double reader_busy = 0, reader_cpu = 0, cpu = 0, cpu_polling = 0;
  std::string cache;
  std::string cpu_burner;  // client_cpu only
  struct Band {
    std::uint64_t depth_from = 0, calls = 0;
    double mean_seconds = 0;
  };
  std::vector<Band> bands;
};

RebuiltBottleneck rebuild_bottleneck(const PhaseTotals& t);

}  // namespace trainio::verify
