#pragma once
// Finished runs read back from their results folders (summary.json), for `trainio report` and
// `trainio compare`, and the figures those commands know by name.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainio::report {

struct RunResult {
  std::string folder;
  std::string workload;
  std::string start, end;
  nlohmann::json summary;
};

// A results folder (holding summary.json) is one run; a folder of results folders is a set of
// runs, in name order; so is a folder of such folders when none of its own folders is a run (a
// sweep's folder: DIR/<point>/run<N>). Failed attempts a campaign moved aside are left out. Throws a usage error naming the path when there is no run, or when a
// summary.json cannot be read or parsed.
std::vector<RunResult> load_runs(const std::string& path);

// Why a run is incomplete ("SIGTERM stopped it in epoch 3 (train)"): a signal ended it before its
// plan did (summary.json's trainio.complete); none for a complete run, or one that does not say.
std::optional<std::string> incomplete_reason(const RunResult& run);

// The table the run printed at its end, which it keeps in summary.txt; empty when it has none
// (an older trainio's run, or DLIO's).
std::string kept_table(const RunResult& run);

// Typed reads of a dotted path into a summary ("trainio.workload.name", "metric.x.0"): what is
// absent or of another type reads as absent, so a hand-edited or foreign summary.json can never
// crash a report.
const nlohmann::json* node_at(const nlohmann::json& root, const std::string& dotted);
std::optional<double> number_at(const nlohmann::json& root, const std::string& dotted);
std::string text_at(const nlohmann::json& root, const std::string& dotted);  // "" when absent

// A figure of a run that report and compare know by name.
struct Figure {
  const char* name;
  const char* unit;
  bool higher_is_better;
  const char* help;
  // Steady between runs of one configuration (means over epochs): what compare judges by
  // default. Tail percentiles are not: between two runs of one configuration they moved 70%.
  bool stable = true;
  // Whether a change is better or worse at all: the bytes the storage calls returned per second
  // fall when read amplification does, which is neither.
  bool judged = true;
};
const std::vector<Figure>& known_figures();

// A figure's value for people: rates and times scaled ("1.20 GiB/s", "87.3 us"), other units
// with two decimals, figures without a unit (dotted paths) with 6 significant digits.
std::string figure_text(double value, const std::string& unit);

// The value of `name` in a run: a known figure, or a dotted path into summary.json
// ("trainio.train.au_mean_percentage", "metric.train_au_percentage.0"). Nullopt when absent.
std::optional<double> figure_of(const RunResult& run, const std::string& name);
// Whether a larger value of `name` is better (known figures; else a guess from the name:
// seconds, durations, latencies and waits are better smaller).
bool higher_is_better(const std::string& name);
// The known figure named `name`, or nullptr.
const Figure* find_figure(const std::string& name);

}  // namespace trainio::report
