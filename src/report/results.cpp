#include "report/results.hpp"

#include <fmt/format.h>

#include "config/dump.hpp"
#include "plan/checkpoint_plan.hpp"
#include "report/dlio_files.hpp"
#include "report/summary_json.hpp"
#include "report/tables.hpp"
#include "storage/atomic_file.hpp"
#include "storage/fs.hpp"
#include "util/host_info.hpp"
#include "util/paths.hpp"

namespace trainio::report {

namespace {

// A JSON document streamed into a result file (durably, under its name only when whole).
template <typename Write>
void write_json(const std::string& path, Write&& write) {
  storage::AtomicFile file(path, true);
  JsonStream out([&](std::string_view text) { file.write(text); });
  write(out);
  out.finish();
  file.write("\n");
  file.commit();
}

}  // namespace

void DlioFiles::write_results(const ResultsOf& run) {
  const auto& w = run.workload;
  const util::HostInfo host = util::host_info();
  RankHost rh;
  rh.hostname = host.hostname;
  rh.machine = host.machine;
  rh.cpu_count = host.cpu_count;
  rh.memory_gib = static_cast<double>(host.memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  rh.potential_caching =
      static_cast<double>(host.memory_bytes) > data_bytes_per_host(w, run.layout, ranks_on_host_, run.summary.ranks);
  const double checkpoint_gib =
      w.workflow.checkpoint ? static_cast<double>(plan::CheckpointPlan(w, run.summary.ranks).total_bytes()) / (1ULL << 30) : 0.0;
  const std::string per_epoch_stats = dlio_per_epoch_stats_json(run.record, checkpoint_gib);
  write_json(util::join(folder_, fmt::format("{}_output.json", rank_)), [&](JsonStream& out) { dlio_output_json(run.record, rh, out); });
  storage::write_file_atomic(util::join(folder_, fmt::format("{}_per_epoch_stats.json", rank_)), per_epoch_stats);
  if (rank_ == 0) storage::write_file_atomic(util::join(folder_, "per_epoch_stats.json"), per_epoch_stats);
}

void SummaryFiles::write_results(const ResultsOf& run) {
  const auto& w = run.workload;
  storage::write_file_atomic(util::join(folder_, "config.yaml"), config::to_yaml(w, false));
  storage::write_file_atomic(util::join(folder_, "per_epoch.csv"), per_epoch_csv(run.summary));
  write_json(util::join(folder_, "summary.json"),
             [&](JsonStream& out) { summary_json(out, w, run.layout, run.shape, run.summary, run.context); });
}

}  // namespace trainio::report
