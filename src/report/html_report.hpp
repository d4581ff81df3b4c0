#pragma once
// The HTML reports: one self-contained file (inline SVG charts and CSS; no script, nothing
// fetched from a network), readable offline and attachable to a ticket.
//  - runs_html: for each run, AU and throughput per epoch against the AU target, where the step
//    time went (batch wait, compute, barrier), the whole run's sample-read and batch-wait
//    latency percentiles (the end-of-run table's), the spread between ranks, each checkpoint's
//    bandwidth (all ranks' bytes and the slowest rank's, over its duration); several runs side
//    by side.
//  - sweep_html: a sweep's points, AU and throughput against ranks (or, when the ranks do not
//    vary, the first varied key), one line or bar colour per combination of the other varied
//    keys, with the AU target drawn; then the table of points.

#include <string>
#include <utility>
#include <vector>

#include "report/run_results.hpp"

namespace trainio::report {

std::string runs_html(const std::vector<RunResult>& runs);

struct SweepPointFigures {
  std::string name;  // "ranks=2,reader.read_threads=4"
  std::vector<std::pair<std::string, std::string>> settings;  // ("ranks", "2"), then each varied key's value
  double au_mean = NAN, au_min = NAN, samples_per_second = NAN, read_mib_per_second = NAN;
  std::string verdict;
};
std::string sweep_html(const std::string& title, const std::vector<SweepPointFigures>& points, double au_target_percent);

}  // namespace trainio::report
