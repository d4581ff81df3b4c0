#pragma once
// What a person sees of a run on rank 0's terminal (and in its log): a line per epoch and
// checkpoint as each is summarised, the final table (kept as summary.txt beside the figures: `trainio
// report RUN` shows it again), the start-to-first-read line, and why a stopped run stopped.

#include <cstdint>
#include <functional>
#include <string>

#include "report/reporter.hpp"

namespace trainio::report {

class ConsoleReporter final : public Reporter {
 public:
  // Prints a result to standard output and into the run's log (the command's print_result).
  using Print = std::function<void(const std::string&)>;
  // `folder`: the results folder (empty when the run only generates data); `generate_only`:
  // `trainio generate`, whose one line goes to standard output alone.
  ConsoleReporter(const config::Workload& w, const plan::DatasetLayout& layout, const plan::RunShape& shape,
                  std::string folder, bool generate_only, Print print);
  void epoch_summarised(const metrics::EpochSummary& s) override;
  void checkpoint_summarised(const metrics::CheckpointSummary& s) override;
  void generated(const metrics::RunSummary& s) override;
  void finished(const ResultsOf& run) override;
  void stopped(const std::string& why) override;

 private:
  std::string data_folder_;
  std::uint64_t epochs_;
  double nominal_record_bytes_;
  // Checkpoint-only runs know how many saves and loads they make; training runs do not (0).
  std::uint64_t planned_saves_, planned_loads_;
  std::string folder_;
  bool generate_only_;
  Print print_;
};

}  // namespace trainio::report
