#include "report/console_reporter.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "report/async_json.hpp"
#include "report/console.hpp"
#include "storage/fs.hpp"
#include "util/paths.hpp"

namespace trainio::report {

namespace {
std::uint64_t planned(const config::Workload& w, std::int64_t count) {
  return w.workflow.train ? 0 : static_cast<std::uint64_t>(std::max<std::int64_t>(0, count));
}
}  // namespace

ConsoleReporter::ConsoleReporter(const config::Workload& w, const plan::DatasetLayout& layout, const plan::RunShape& shape,
                                 std::string folder, bool generate_only, Print print)
    : data_folder_(layout.root()),
      epochs_(shape.epochs),
      nominal_record_bytes_(layout.nominal_record_bytes()),
      planned_saves_(planned(w, w.checkpoint.num_checkpoints_write)),
      planned_loads_(planned(w, w.checkpoint.num_checkpoints_read)),
      folder_(std::move(folder)),
      generate_only_(generate_only),
      print_(std::move(print)) {}

void ConsoleReporter::epoch_summarised(const metrics::EpochSummary& s) {
  print_(epoch_line(s, epochs_, nominal_record_bytes_) + "\n");
  if (s.flush_overlap)
    if (const std::string line = flush_overlap_line(s.epoch, *s.flush_overlap); !line.empty()) print_(line + "\n");
}

void ConsoleReporter::checkpoint_summarised(const metrics::CheckpointSummary& s) {
  const bool save = s.kind == metrics::CheckpointRecord::Kind::save;
  print_(checkpoint_line(s, save ? planned_saves_ : planned_loads_) + "\n");
  if (s.async.on) print_(async_save_line(s) + "\n");
}

void ConsoleReporter::generated(const metrics::RunSummary& s) {
  const std::string line = fmt::format("generated the dataset in {}: {}", data_folder_, generation_line(s.generate));
  if (generate_only_) std::printf("%s\n", line.c_str());
  else spdlog::info("{}", line);  // also into the run's log file
}

void ConsoleReporter::finished(const ResultsOf& run) {
  std::vector<std::string> hostnames;
  for (const auto& h : run.context.hosts) hostnames.push_back(h.hostname);
  const std::string table =
      final_table(run.workload, run.layout, run.summary, util::join(folder_, "summary.json"), hostnames);
  print_(table);
  storage::write_file_atomic(util::join(folder_, "summary.txt"), table);
  if (const std::string line = startup_line(run.summary.startup, run.context.failover); !line.empty()) {
    print_(line + "\n");
    spdlog::info("{}", line);  // also into the run's log file
  }
}

void ConsoleReporter::stopped(const std::string& why) {
  spdlog::warn("{}: the results of what ran before are kept in {}, marked incomplete", why, folder_);
}

}  // namespace trainio::report
