#include "verify/capacity_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "util/paths.hpp"

namespace trainio::verify {

namespace {

// Each rank's share of the cores it may run on, from the first line of its records, summed;
// none when a rank's records do not say (written before they did).
std::optional<double> client_cores(const std::string& folder, int ranks) {
  double cores = 0;
  for (int r = 0; r < ranks; ++r) {
    std::ifstream in(util::join(folder, fmt::format("{}_records.jsonl", r)));
    std::string first;
    if (!in || !std::getline(in, first)) return std::nullopt;
    const nlohmann::json rank = nlohmann::json::parse(first, nullptr, false);
    const auto it = rank.is_object() ? rank.find("cores") : rank.end();
    if (it == rank.end() || !it->is_number()) return std::nullopt;
    cores += it->get<double>();
  }
  return cores;
}

}  // namespace

void check_capacity(const std::string& folder, const JsonValue& summary, const RunTotals& totals, Checks& checks) {
  const std::string at = "trainio/train/client_capacity";
  if (!find(summary, at).valid()) return;  // a summary from before the estimate, or no training
  const JsonValue target = find(summary, "trainio/train/au_target_percentage");
  const EpochSums& e = totals.epochs;
  const double steps = e.steps, compute = e.compute, bytes = e.bytes, cpu = e.cpu, polling = e.polling, duration = e.duration,
               idle = e.idle, ticks = e.ticks;
  const std::optional<double> cores = client_cores(folder, totals.ranks);
  const double au = target.valid() && target.is_number() ? target.f64() / 100 : 0;
  // docs/metrics.md: demand = bytes / (compute / au); cost = (cpu - polling) / bytes; accelerators
  // = cores / (cost x demand); beside others: less the cores they used, cores x (1 - idle share) -
  // cpu / duration, at least 0.
  std::optional<double> demand, per_byte, per_accelerator, available, accelerators, beside_others;
  if (steps > 0 && bytes > 0 && compute > 0 && au > 0 && cores && *cores > 0) {
    demand = bytes / (compute / au);
    per_byte = std::max(0.0, cpu - polling) / bytes;
    per_accelerator = *per_byte * *demand;
    const double others = ticks > 0 && duration > 0 ? std::max(0.0, *cores * (1 - idle / ticks) - cpu / duration) : 0;
    available = *cores - others;
    if (*per_accelerator > 0) {
      accelerators = std::floor(*cores / *per_accelerator);
      beside_others = std::floor(std::max(0.0, *available) / *per_accelerator);
    }
  }
  const Tolerance sums{1e-9, 1e-12};  // doubles summed in another order than the ranks' reduction
  const std::string name = "trainio.train.client_capacity";
  checks.number(name + ".accelerators", find(summary, at + "/accelerators"), accelerators, kExact, true);
  checks.number(name + ".accelerators_beside_others", find(summary, at + "/accelerators_beside_others"), beside_others, kExact);
  checks.number(name + ".evidence.cores", find(summary, at + "/evidence/cores"), cores, sums);
  checks.number(name + ".evidence.compute_seconds", find(summary, at + "/evidence/compute_seconds"), compute, sums);
  checks.number(name + ".evidence.bytes_read", find(summary, at + "/evidence/bytes_read"), bytes, kExact);
  checks.number(name + ".evidence.demand_bytes_per_second", find(summary, at + "/evidence/demand_bytes_per_second"), demand, sums);
  checks.number(name + ".evidence.cpu_seconds_per_byte", find(summary, at + "/evidence/cpu_seconds_per_byte"), per_byte, sums);
  checks.number(name + ".evidence.cores_per_accelerator", find(summary, at + "/evidence/cores_per_accelerator"),
                per_accelerator, sums);
  checks.number(name + ".evidence.available_cores", find(summary, at + "/evidence/available_cores"), available, sums);
}

}  // namespace trainio::verify
