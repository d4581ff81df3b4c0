#include "campaign/outcome.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/units.hpp"

namespace trainio::campaign {

RunFigures figures_of(const report::RunResult& run) {
  RunFigures f;
  f.au_mean = report::figure_of(run, "train_au_mean_percentage");
  if (const auto* list = report::node_at(run.summary, "metric.train_au_percentage"); list && list->is_array())
    for (const auto& v : *list)
      if (v.is_number()) f.au_lowest_epoch = std::min(f.au_lowest_epoch.value_or(v.get<double>()), v.get<double>());
  f.samples_per_second = report::figure_of(run, "train_throughput_mean_samples_per_second");
  f.read_bytes_per_second = report::figure_of(run, "read_bytes_per_second");
  const std::string verdict = report::text_at(run.summary, "metric.train_au_meet_expectation");
  f.verdict = verdict == "success" ? "pass" : verdict == "fail" ? "fail" : "unknown";
  if (const auto* epochs = report::node_at(run.summary, "trainio.epochs"); epochs && epochs->is_array())
    for (const auto& e : *epochs)
      if (const auto* v = report::node_at(e, "train.bottleneck.verdict"); v && v->is_string()) {
        f.bottlenecks.push_back(v->get<std::string>());
        f.page_cache.push_back(report::text_at(e, "train.page_cache.verdict"));
        f.storage_wait_share.push_back(report::number_at(e, "train.bottleneck.evidence.storage_wait_share").value_or(-1));
      }
  if (const auto n = report::number_at(run.summary, "trainio.train.client_capacity.accelerators"))
    f.client_capacity = static_cast<long>(*n);
  return f;
}

Limit limit_of(const RunFigures& f) {
  std::map<std::string, int> count;
  for (const auto& v : f.bottlenecks) ++count[v];
  if (count.empty()) return {"unknown", "its epochs have no bottleneck verdict"};
  // The verdict of the most epochs (the first in name order on a tie).
  const auto most = std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const std::string& v = most->first;
  std::string by = v == "storage" ? "storage" : v == "client_cpu" || v == "concurrency" || v == "page_cache" ? "client" : "unknown";
  const std::string why = fmt::format("bottleneck {} in {} of {} epochs", v, most->second, f.bottlenecks.size());
  // A straggler or an unclear verdict over reads this host's memory served: not the storage.
  const bool cached = !f.page_cache.empty() && std::all_of(f.page_cache.begin(), f.page_cache.end(),
                                                           [](const std::string& c) { return c == "page_cache"; });
  if (by == "unknown" && cached) return {"client", why + ", its reads served from the page cache"};
  // One that waited on the storage (a rank held the others, or no rule decided).
  const bool waited = !f.storage_wait_share.empty() && std::all_of(f.storage_wait_share.begin(), f.storage_wait_share.end(),
                                                                   [](double share) { return share >= 0.5; });
  if (by == "unknown" && (v == "straggler" || v == "unknown") && waited && !cached)
    return {"storage", why + ", its readers waiting in storage calls most of their busy time"};
  return {by, why};
}

std::string outcome_line(const JobOutcome& outcome) {
  if (!outcome.result) {
    if (outcome.exit_code == 0) return fmt::format("FAILED: it wrote no summary.json (see {})", outcome.log);
    return fmt::format("FAILED (exit {}): see {}", outcome.exit_code, outcome.log);
  }
  const RunFigures f = figures_of(*outcome.result);
  std::string line = f.au_mean ? fmt::format("AU {:.1f}% {}", *f.au_mean,
                                             f.verdict == "pass" ? "PASS" : f.verdict == "fail" ? "FAIL" : "(no verdict)")
                               : std::string("AU -");
  if (f.samples_per_second) line += fmt::format("  {:.1f} samples/s", *f.samples_per_second);
  if (f.read_bytes_per_second) line += "  read " + util::format_rate(*f.read_bytes_per_second);
  if (outcome.kept) line += "  (finished earlier, kept)";
  return line;
}

}  // namespace trainio::campaign
