#pragma once
// DLIO's summary figures of a phase over the run's epochs (REFERENCE §5), and for each figure
// DLIO's formulas cannot give, the reason. summary.json writes those figures as null with the
// reason as a note; the console prints no value and no verdict for them.

#include <optional>
#include <string>
#include <vector>

#include "config/workload.hpp"
#include "metrics/summary.hpp"

namespace trainio::report {

// A figure without a value (or a value over some epochs only) and why, e.g.
// {"metric.train_throughput_mean_samples_per_second", "only 2 steps per rank in epoch 1: ..."}.
struct FigureNote {
  std::string figure;  // its path in summary.json
  std::string cause;
};

struct DlioFigures {
  std::vector<std::optional<double>> au;          // percent, per epoch (of the phase)
  std::vector<std::optional<double>> throughput;  // samples/s, per epoch
  // Over the epochs that have a value; absent when none has.
  std::optional<double> au_mean, au_stdev, throughput_mean, throughput_stdev;
  std::optional<double> io_mean, io_stdev;        // DLIO's MB/s: throughput x nominal record bytes / 2^20
  // The verdict AU >= metric.au. Training: MLPerf's, on a result, absent without both an AU and a
  // throughput. Evaluation: DLIO's, on the AU alone.
  std::optional<bool> au_meets;
  std::string verdict_cause;                      // why there is no verdict
  std::vector<FigureNote> notes;
};

// `prefix` is "train" or "eval" (DLIO's key prefixes).
DlioFigures dlio_figures(const metrics::RunSummary& run, const std::string& prefix, double nominal_record_bytes,
                         const config::Workload& w);

}  // namespace trainio::report
