#include "verify/aggregate_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "report/run_results.hpp"
#include "util/error.hpp"

namespace trainio::verify {

namespace {

using json = nlohmann::json;

std::optional<double> mean_of(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// Population standard deviation; none for one value (one run says nothing of how runs vary).
std::optional<double> stdev_of(const std::vector<double>& v) {
  const auto m = mean_of(v);
  if (!m || v.size() < 2) return std::nullopt;
  double acc = 0;
  for (double x : v) acc += (x - *m) * (x - *m);
  return std::sqrt(acc / static_cast<double>(v.size()));
}

// A run's summary, by its folder as the aggregate names it: relative to the folder `trainio report`
// ran in, which is this one, or one that holds the aggregate's folder.
std::optional<report::RunResult> run_at(const std::string& folder, const std::string& beside) {
  std::vector<std::string> candidates{folder};
  if (std::filesystem::path(folder).is_relative())
    for (auto at = std::filesystem::absolute(beside); !at.empty(); at = at.parent_path()) {
      candidates.push_back((at / folder).string());
      if (at == at.parent_path()) break;
    }
  for (const std::string& candidate : candidates) {
    std::ifstream in(std::filesystem::path(candidate) / "summary.json");
    if (!in) continue;
    report::RunResult r;
    r.folder = candidate;
    r.summary = json::parse(in, nullptr, false);
    if (r.summary.is_discarded()) return std::nullopt;
    if (const json* s = find(r.summary, "start"); s && s->is_string()) r.start = s->get<std::string>();
    if (const json* e = find(r.summary, "end"); e && e->is_string()) r.end = e->get<std::string>();
    return r;
  }
  return std::nullopt;
}

void one(const json& a, const std::string& name, const std::string& beside, Checks& checks) {
  std::vector<report::RunResult> runs;
  const json* listed = find(a, "runs");
  for (const auto& folder : listed && listed->is_array() ? *listed : json::array()) {
    auto r = run_at(folder.get<std::string>(), beside);
    if (!r) {
      checks.problem(name + ".runs", fmt::format("run '{}' has no readable summary.json", folder.get<std::string>()));
      continue;
    }
    runs.push_back(std::move(*r));
  }
  const json* figures = find(a, "figures");
  static const json kNone = json::object();
  for (const auto& [figure, f] : (figures && figures->is_object() ? *figures : kNone).items()) {
    const std::string at = fmt::format("{}.figures.{}", name, figure);
    std::vector<double> values;
    const json* reported = find(f, "values");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto v = report::figure_of(runs[i], figure);
      checks.number(fmt::format("{}.values.{} ({})", at, i, runs[i].folder), reported ? find(*reported, std::to_string(i)) : nullptr,
                    v, kExact);
      if (v) values.push_back(*v);
    }
    const auto mean = mean_of(values);
    const auto stdev = stdev_of(values);
    const bool spreads = values.size() >= 2 && mean && *mean != 0;
    const auto cv = spreads ? std::optional<double>(*stdev / std::fabs(*mean)) : std::nullopt;
    std::optional<double> spread;
    if (spreads) {
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      spread = (*hi - *lo) / std::fabs(*mean);
    }
    checks.number(at + ".mean", find(f, "mean"), mean, kRounding, true);
    checks.number(at + ".stdev", find(f, "stdev"), stdev, {1e-9, 1e-12});
    checks.number(at + ".cv", find(f, "cv"), cv, {1e-9, 1e-12});
    checks.number(at + ".spread", find(f, "spread"), spread, {1e-9, 1e-12});
    if (spread) checks.flag(at + ".within_5_percent", find(f, "within_5_percent"), *spread <= 0.05);
  }
  // --mlperf: what the summaries decide. Any of these failing fails the set.
  if (const json* mlperf = find(a, "mlperf")) {
    std::vector<std::string> failed;
    if (runs.size() != 5) failed.push_back(fmt::format("{} runs after the warm-up, not 5", runs.size()));
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const json* verdict = find(runs[i].summary, "metric/train_au_meet_expectation");
      if (!verdict || !verdict->is_string() || verdict->get<std::string>() != "success")
        failed.push_back(fmt::format("run {} does not meet the AU expectation", i + 1));
      if (i > 0 && !runs[i - 1].end.empty() && runs[i].start < runs[i - 1].end)
        failed.push_back(fmt::format("run {} started before run {} ended", i + 1, i));
    }
    for (const char* result : {"train_throughput_mean_samples_per_second", "save_checkpoint_io_mean_GB_per_second",
                               "load_checkpoint_io_mean_GB_per_second"}) {
      const json* spread = figures ? find(*figures, std::string(result) + "/spread") : nullptr;
      if (figures && find(*figures, result) && (!spread || !spread->is_number() || spread->get<double>() > 0.05))
        failed.push_back(fmt::format("{} is not within 5%", result));
    }
    // A set that fails one of these cannot pass; one that passes them all may still fail a check
    // the summaries cannot decide alone (the division, the seeds), which is then named.
    const json* pass = find(*mlperf, "pass");
    const bool reported_pass = pass && pass->is_boolean() && pass->get<bool>();
    if (!failed.empty() && reported_pass)
      checks.problem(name + ".mlperf.pass", "reported pass, but " + failed.front());
    else
      checks.flag(name + ".mlperf.pass", pass, failed.empty() ? reported_pass : false, true);
  }
}

}  // namespace

std::string verify_aggregate(const std::string& path, Checks& checks) {
  std::ifstream in(path);
  const json doc = json::parse(in, nullptr, false);
  if (!in || doc.is_discarded() || !doc.is_object())
    throw usage_error(fmt::format("'{}' is not an aggregate trainio report wrote (not JSON)", path));
  const std::string beside = std::filesystem::path(path).parent_path().string();
  const std::string name = std::filesystem::path(path).filename().string();
  if (const json* groups = find(doc, "configurations"); groups && groups->is_array()) {
    for (std::size_t g = 0; g < groups->size(); ++g) one((*groups)[g], fmt::format("{}.configurations.{}", name, g), beside, checks);
  } else {
    one(doc, name, beside, checks);
  }
  return {};
}

}  // namespace trainio::verify
