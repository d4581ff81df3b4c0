#pragma once
// What a run's outputs hear of it. Each output (the console, the result files, DLIO's files,
// per_rank.csv, the records, --live-json) is one Reporter, as Google Benchmark's reporters are;
// the run command builds the list on each rank and forwards the run's events to it, in order.
// A reporter that writes on rank 0 only is built on rank 0 only.

#include <memory>
#include <string>
#include <vector>

#include "config/workload.hpp"
#include "metrics/run_record.hpp"
#include "metrics/summary.hpp"
#include "plan/run_plan.hpp"
#include "report/context.hpp"

namespace trainio::report {

// A run that ended, as the reporters receive it.
struct ResultsOf {
  const config::Workload& workload;
  const plan::DatasetLayout& layout;
  const plan::RunShape& shape;
  const metrics::RankRecord& record;  // this rank's
  const metrics::RunSummary& summary;
  const RunContext& context;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  // An epoch or a checkpoint ended: this rank's measurements, before the ranks summarise them
  // (every rank), then the figures across all ranks (the per-rank parts are rank 0's).
  virtual void epoch_measured(const metrics::EpochRecord&) {}
  virtual void epoch_summarised(const metrics::EpochSummary&) {}
  virtual void checkpoint_measured(const metrics::CheckpointRecord&) {}
  virtual void checkpoint_summarised(const metrics::CheckpointSummary&) {}
  // A run that only generated data, which keeps no results.
  virtual void generated(const metrics::RunSummary&) {}
  // The run's end: each output's files, every rank's reporters inside one collective step
  // (engine::together), so that a file that fails on one rank fails the run on all.
  virtual void write_results(const ResultsOf&) {}
  // Every file is in place: what is shown of the run.
  virtual void finished(const ResultsOf&) {}
  // A signal stopped the run before its plan's end (`why`); the results written are incomplete.
  virtual void stopped(const std::string& /*why*/) {}
};

// A rank's reporters: each event goes to each, in the order they were added.
class Reporters final : public Reporter {
 public:
  // Keeps `r` (a null one is skipped) and returns it, for what the caller still needs of it.
  template <typename R>
  R* add(std::unique_ptr<R> r) {
    R* kept = r.get();
    if (r) list_.push_back(std::move(r));
    return kept;
  }
  void epoch_measured(const metrics::EpochRecord& e) override;
  void epoch_summarised(const metrics::EpochSummary& s) override;
  void checkpoint_measured(const metrics::CheckpointRecord& c) override;
  void checkpoint_summarised(const metrics::CheckpointSummary& s) override;
  void generated(const metrics::RunSummary& s) override;
  void write_results(const ResultsOf& run) override;
  void finished(const ResultsOf& run) override;
  void stopped(const std::string& why) override;

 private:
  std::vector<std::unique_ptr<Reporter>> list_;
};

}  // namespace trainio::report
