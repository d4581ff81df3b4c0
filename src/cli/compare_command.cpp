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
        const auto baseline = report::load_runs(cmd.baseline);
        const auto candidate = report::load_runs(cmd.candidate);
        const report::Comparison c = report::compare_runs(baseline, candidate, cmd.metrics, thresholds, cmd.alpha);
        const std::string out = cmd.format == "markdown" ? report::comparison_markdown(c)
                                : cmd.format == "junit"  ? report::comparison_junit(c)
                                                         : report::comparison_text(c);
        std::printf("%s", out.c_str());
        return c.regression() ? 1 : 0;
      });
}

}  // namespace trainio::cli
