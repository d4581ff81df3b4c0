#include "verify/verify_run.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/paths.hpp"
#include "verify/capacity_checks.hpp"
#include "verify/run_totals.hpp"

namespace trainio::verify {

std::string verify_run(const std::string& folder, Checks& checks) {
  const std::string path = util::join(folder, "summary.json");
  std::ifstream in(path);
  if (!in) throw usage_error(fmt::format("'{}' holds no summary.json", folder), "name a results folder of trainio run");
  const nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
  if (summary.is_discarded() || !summary.is_object())
    throw usage_error(fmt::format("'{}' is not valid JSON", path), "name a results folder of trainio run");
  const nlohmann::json* ranks = find(summary, "trainio/context/ranks");
  if (ranks == nullptr || !ranks->is_number_unsigned() || ranks->get<std::uint64_t>() == 0)
    throw usage_error(fmt::format("'{}' is not a trainio summary (no trainio.context.ranks)", path),
                      "verify needs the records a trainio run keeps; DLIO's results have none");
  RunTotals totals;
  read_ranks(folder, ranks->get<int>(), totals, checks);
  check_summary(folder, summary, totals, checks);
  check_csvs(folder, totals, checks);
  check_capacity(folder, summary, totals, checks);
  if (totals.incomplete_ranks == 0) return {};
  const nlohmann::json* reason = find(summary, "trainio/stopped/reason");
  const nlohmann::json* epoch = find(summary, "trainio/stopped/epoch");
  return fmt::format("incomplete: {} stopped the run in epoch {}; these are the figures of what ran before",
                     reason && reason->is_string() ? reason->get<std::string>() : "a signal", epoch ? epoch->dump() : "?");
}

}  // namespace trainio::verify
