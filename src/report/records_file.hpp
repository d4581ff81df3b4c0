#pragma once
// The run's evidence: each rank's raw measurements, phase by phase, in `<rank>_records.jsonl`
// (one JSON object a line, docs/results.md), from which every figure of summary.json, the CSVs
// and DLIO's files can be recomputed (`trainio verify` does). Streamed as each phase ends, so a
// rank holds none of it; written under a temporary name and renamed when whole, and its last line
// says the file is complete, so a cut file is never taken for the record of a whole run.

#include <cstdint>
#include <string>

#include "metrics/run_record.hpp"
#include "report/reporter.hpp"
#include "storage/atomic_file.hpp"

namespace trainio::report {

// What the first line says of the rank, beside its number.
struct RecordsHeader {
  int rank = 0, ranks = 1;
  int host_index = 0;
  std::string hostname;
  std::uint64_t batch_size = 0, batch_size_eval = 0;
  std::uint64_t exclude_start_steps = 0, exclude_end_steps = 0;
  double cores = 0;  // the rank's share of the cores it may run on (engine::RankCores::share)
};

class RecordsFile final : public Reporter {
 public:
  static std::string name_for(int rank);  // "<rank>_records.jsonl"
  RecordsFile(const std::string& folder, const RecordsHeader& header);

  // A training epoch's phases, as they end (before their measurements are dropped).
  void epoch_measured(const metrics::EpochRecord& epoch) override;
  void checkpoint_measured(const metrics::CheckpointRecord& checkpoint) override;
  // The earlier job this run resumes from (--resume-from): the failover gap derives from it.
  void add_failover(const std::string& previous_results, const std::string& previous_end);
  // The run's end (after the other result files): generation and cache staging, then the closing
  // line; renames the file into place.
  void write_results(const ResultsOf& run) override;

 private:
  void line(const std::string& json);
  void async_overlap(std::uint64_t epoch, const char* kind, const metrics::ReadPhase& phase);
  storage::AtomicFile file_;
};

}  // namespace trainio::report
