#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "report/run_results.hpp"
#include "util/error.hpp"
#include "verify/aggregate_checks.hpp"
#include "verify/verify_run.hpp"

namespace trainio::cli {

namespace {

void print_check(const verify::Check& c) {
  std::printf("  %-8s %s: reported %s, recomputed %s%s\n", c.ok ? "OK" : "MISMATCH", c.figure.c_str(), c.reported.c_str(),
              c.recomputed.c_str(), c.difference.empty() || c.difference == "0" ? "" : (", difference " + c.difference).c_str());
}

// One run (or one aggregate of runs): its headline figures, every mismatch, and the count.
// Returns whether all agreed.
bool verify_one(const std::string& folder, bool all, std::string (*verify)(const std::string&, verify::Checks&)) {
  std::printf("%s\n", folder.c_str());
  verify::Checks checks;
  if (all) checks.on_check = print_check;
  else checks.on_headline = print_check;  // as they come: a long run has a few an epoch
  std::string note;
  try {
    note = verify(folder, checks);
  } catch (const Error& e) {
    // A wrong folder, or what stops verify itself (a file it cannot open): no verdict on the run.
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::config || e.kind() == ErrorKind::io) throw;
    // Evidence that is missing, cut short or damaged: the figures cannot be proven.
    std::printf("  MISMATCH %s\n", e.what());
    if (!e.hint().empty()) std::printf("           %s\n", e.hint().c_str());
    return false;
  }
  if (!all) {
    for (const auto& c : checks.failed())
      if (!c.headline) print_check(c);
    if (checks.mismatches() > checks.failed().size())
      std::printf("  ... and %llu more mismatches\n",
                  static_cast<unsigned long long>(checks.mismatches() - checks.failed().size()));
  }
  if (!note.empty()) std::printf("  %s\n", note.c_str());
  std::printf("  %llu figures recomputed from the records: %s\n", static_cast<unsigned long long>(checks.count()),
              checks.mismatches() == 0
                  ? "all agree"
                  : fmt::format("{} disagree", checks.mismatches()).c_str());
  return checks.mismatches() == 0;
}

}  // namespace

int verify_command(const VerifyCommand& cmd) {
  return guarded([&] {
    std::vector<std::string> folders, aggregates;
    for (const auto& path : cmd.runs) {
      if (std::filesystem::is_regular_file(path)) {  // an aggregate named by itself
        aggregates.push_back(path);
        continue;
      }
      // A run's own folder is verified without reading its summary twice (verify reads it once,
      // with the same checks load_runs makes); a folder of runs is listed by load_runs.
      if (std::filesystem::is_regular_file(std::filesystem::path(path) / "summary.json")) folders.push_back(path);
      else for (const auto& r : report::load_runs(path)) folders.push_back(r.folder);
      // The aggregates `trainio report` wrote beside the runs: aggregate.json, aggregate-2.json, ...
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file() && name.starts_with("aggregate") && name.ends_with(".json"))
          aggregates.push_back(entry.path().string());
      }
    }
    std::sort(aggregates.begin(), aggregates.end());
    bool ok = true;
    for (const auto& folder : folders) ok = verify_one(folder, cmd.all, verify::verify_run) && ok;
    for (const auto& aggregate : aggregates) ok = verify_one(aggregate, cmd.all, verify::verify_aggregate) && ok;
    if (folders.size() + aggregates.size() > 1)
      std::printf("%zu run%s and %zu aggregate%s: %s\n", folders.size(), folders.size() == 1 ? "" : "s", aggregates.size(),
                  aggregates.size() == 1 ? "" : "s", ok ? "every figure agrees with its records" : "MISMATCH");
    return ok ? 0 : 1;
  });
}

}  // namespace trainio::cli
