#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "report/aggregate.hpp"
#include "report/html_report.hpp"
#include "storage/fs.hpp"
#include "util/error.hpp"

namespace trainio::cli {

namespace {

namespace fs = std::filesystem;

// The folder that holds every run (their deepest common parent), where the aggregate belongs.
fs::path beside_the_runs(const std::vector<report::RunResult>& runs) {
  fs::path common;
  for (const auto& r : runs) {
    const fs::path parent = fs::absolute(r.folder).lexically_normal().parent_path();
    if (common.empty()) {
      common = parent;
      continue;
    }
    fs::path shared;
    for (auto a = common.begin(), b = parent.begin(); a != common.end() && b != parent.end() && *a == *b; ++a, ++b)
      shared /= *a;
    common = shared;
  }
  return common;
}

// Where the aggregate goes: --output, which must not exist, or aggregate.json beside the runs,
// numbered (aggregate-2.json, ...) when an earlier report is there: never over an existing file.
std::string aggregate_path(const std::string& output, const std::vector<report::RunResult>& runs) {
  if (!output.empty()) {
    if (fs::exists(output))
      throw usage_error(fmt::format("--output '{}' exists, and a report never writes over a file", output),
                        "name a new file, or remove the old one first");
    return output;
  }
  const fs::path folder = beside_the_runs(runs);
  fs::path path = folder / "aggregate.json";
  for (int n = 2; fs::exists(path); ++n) path = folder / fmt::format("aggregate-{}.json", n);
  return path.string();
}

// --html: the charts of the runs, into a new file.
void write_html(const std::string& path, const std::vector<report::RunResult>& runs) {
  if (fs::exists(path))
    throw usage_error(fmt::format("--html '{}' exists, and a report never writes over a file", path),
                      "name a new file, or remove the old one first");
  storage::write_file_atomic(path, report::runs_html(runs));
  std::printf("charts: %s\n", path.c_str());
}

}  // namespace

int report_command(const ReportCommand& cmd) {
  return guarded(
      [&] {
        std::vector<report::RunResult> runs;
        for (const auto& path : cmd.runs)
          for (auto& r : report::load_runs(path)) runs.push_back(std::move(r));
        if (!cmd.html.empty()) write_html(cmd.html, runs);
        if (runs.size() == 1 && !cmd.mlperf) {
          std::printf("%s", report::run_text(runs.front()).c_str());
          return 0;
        }
        const std::vector<report::Aggregate> groups =
            cmd.mlperf ? std::vector<report::Aggregate>{report::aggregate_runs(runs, true)}
                       : report::aggregate_by_configuration(runs);
        const std::string path = aggregate_path(cmd.output, runs);
        std::printf("%s", report::aggregate_text(groups).c_str());
        storage::write_file_atomic(path, report::aggregate_json(groups));
        std::printf("aggregate: %s\n", path.c_str());
        return cmd.mlperf && !groups.front().problems.empty() ? 1 : 0;
      });
}

}  // namespace trainio::cli
