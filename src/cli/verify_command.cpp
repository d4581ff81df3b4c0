#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "report/run_results.hpp"
#include "util/error.hpp"
#include "verify/verify_run.hpp"

namespace trainio::cli {

namespace {

void print_check(const verify::Check& c) {
  std::printf("  %-8s %s: reported %s, recomputed %s%s\n", c.ok ? "OK" : "MISMATCH", c.figure.c_str(), c.reported.c_str(),
              c.recomputed.c_str(), c.difference.empty() || c.difference == "0" ? "" : (", difference " + c.difference).c_str());
}

// One run: its headline figures, every mismatch, and the count. Returns whether all agreed.
bool verify_one(const std::string& folder, bool all) {
  std::printf("%s\n", folder.c_str());
  verify::Checks checks;
  if (all) checks.on_check = print_check;
  try {
    verify::verify_run(folder, checks);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::config) throw;
    // Evidence that is missing, cut short or damaged: the figures cannot be proven.
    std::printf("  MISMATCH %s\n", e.what());
    if (!e.hint().empty()) std::printf("           %s\n", e.hint().c_str());
    return false;
  }
  if (!all) {
    for (const auto& c : checks.headlines()) print_check(c);
    for (const auto& c : checks.failed())
      if (!c.headline) print_check(c);
    if (checks.mismatches() > checks.failed().size())
      std::printf("  ... and %llu more mismatches\n",
                  static_cast<unsigned long long>(checks.mismatches() - checks.failed().size()));
  }
  std::printf("  %llu figures recomputed from the records: %s\n", static_cast<unsigned long long>(checks.count()),
              checks.mismatches() == 0
                  ? "all agree"
                  : fmt::format("{} disagree", checks.mismatches()).c_str());
  return checks.mismatches() == 0;
}

}  // namespace

int verify_command(const VerifyCommand& cmd) {
  return guarded([&] {
    std::vector<std::string> folders;
    for (const auto& path : cmd.runs)
      for (const auto& r : report::load_runs(path)) folders.push_back(r.folder);
    bool ok = true;
    for (const auto& folder : folders) ok = verify_one(folder, cmd.all) && ok;
    if (folders.size() > 1) std::printf("%zu runs: %s\n", folders.size(), ok ? "every figure agrees with its records" : "MISMATCH");
    return ok ? 0 : 1;
  });
}

}  // namespace trainio::cli
