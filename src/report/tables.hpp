#pragma once
// Spreadsheet views of a run: per_epoch.csv (a row per epoch and phase, all ranks together) and
// per_rank.csv (a row per epoch, phase and rank: the straggler view).

#include <string>
#include <vector>

#include "metrics/summary.hpp"
#include "report/reporter.hpp"
#include "storage/atomic_file.hpp"

namespace trainio::report {

std::string per_epoch_csv(const metrics::RunSummary& run);

// per_rank.csv, written as the run goes (rank 0): each phase's rows as it is summarised, so that
// no rank holds every rank's figures for every phase; the file takes its name only when
// committed whole (a run that fails leaves none), with the run's other result files.
class PerRankCsv final : public metrics::RankRows, public Reporter {
 public:
  // `hostnames`: by host index (gather_hosts).
  PerRankCsv(const std::string& path, std::vector<std::string> hostnames);
  void add(std::uint64_t epoch, const char* phase, const metrics::PhaseSummary& p) override;
  void write_results(const ResultsOf& run) override;

 private:
  storage::AtomicFile file_;
  std::vector<std::string> hostnames_;
};

}  // namespace trainio::report
