#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "report/comparison.hpp"
#include "util/error.hpp"

namespace trainio::cli {

namespace {

// "5%", "5" (percent) or "0.05" (a fraction, below 1).
double parse_percentage(const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    const bool percent = used < text.size() && text.substr(used) == "%";
    if ((used == text.size() || percent) && std::isfinite(v) && v >= 0) return percent || v >= 1 ? v / 100 : v;
  } catch (const std::exception&) {
  }
  throw usage_error(fmt::format("--threshold '{}' is not a percentage", text), "write it as 5% (or 0.05)");
}

// --threshold 5% for every figure, --threshold FIGURE=10% for one (repeatable).
report::Thresholds parse_thresholds(const std::vector<std::string>& options) {
  report::Thresholds t;
  for (const auto& option : options) {
    const auto eq = option.find('=');
    if (eq == std::string::npos) t.all = parse_percentage(option);
    else t.per_figure[option.substr(0, eq)] = parse_percentage(option.substr(eq + 1));
  }
  return t;
}

}  // namespace

int compare_command(const CompareCommand& cmd) {
  return guarded(
      [&] {
        if (cmd.format != "text" && cmd.format != "markdown" && cmd.format != "junit")
          throw usage_error(fmt::format("--format '{}' is not text, markdown or junit", cmd.format));
        const report::Thresholds thresholds = parse_thresholds(cmd.thresholds);
        if (!(cmd.alpha > 0 && cmd.alpha < 1))
          throw usage_error(fmt::format("--alpha {} is not a significance level", cmd.alpha), "give a number between 0 and 1, e.g. 0.05");
        // A run a signal stopped measured part of its plan: it is left out, and a note says so.
        std::vector<std::string> left_out;
        auto complete_runs = [&](const std::string& side) {
          std::vector<report::RunResult> runs;
          for (auto& r : report::load_runs(side)) {
            if (const auto why = report::incomplete_reason(r)) left_out.push_back(fmt::format("{} ({})", r.folder, *why));
            else runs.push_back(std::move(r));
          }
          if (runs.empty())
            throw usage_error(fmt::format("'{}' holds no complete run: a signal stopped every one", side),
                              "compare runs that ran their whole plan");
          return runs;
        };
        const auto baseline = complete_runs(cmd.baseline);
        const auto candidate = complete_runs(cmd.candidate);
        report::Comparison c = report::compare_runs(baseline, candidate, cmd.metrics, thresholds, cmd.alpha);
        for (const auto& run : left_out) c.notes.push_back("left out, incomplete: " + run);
        const std::string out = cmd.format == "markdown" ? report::comparison_markdown(c)
                                : cmd.format == "junit"  ? report::comparison_junit(c)
                                                         : report::comparison_text(c);
        std::printf("%s", out.c_str());
        return c.regression() ? 1 : 0;
      });
}

}  // namespace trainio::cli
