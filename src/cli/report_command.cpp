#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "report/aggregate.hpp"
#include "storage/fs.hpp"

namespace trainio::cli {

int report_command(const ReportCommand& cmd) {
  return guarded(
      [&] {
        std::vector<report::RunResult> runs;
        for (const auto& path : cmd.runs)
          for (auto& r : report::load_runs(path)) runs.push_back(std::move(r));
        if (runs.size() == 1 && !cmd.mlperf) {
          std::printf("%s", report::run_text(runs.front()).c_str());
          return 0;
        }
        const report::Aggregate a = report::aggregate_runs(runs, cmd.mlperf);
        std::printf("%s", report::aggregate_text(a).c_str());
        storage::write_file_atomic(cmd.output, report::aggregate_json(a));
        std::printf("aggregate: %s\n", cmd.output.c_str());
        return cmd.mlperf && !a.problems.empty() ? 1 : 0;
      });
}

}  // namespace trainio::cli
