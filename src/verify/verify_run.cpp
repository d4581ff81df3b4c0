#include "verify/verify_run.hpp"

#include <fmt/format.h>


#include "util/error.hpp"
#include "util/paths.hpp"
#include "verify/async_checkpoint_checks.hpp"
#include "verify/reshard_checks.hpp"
#include "verify/capacity_checks.hpp"
#include "verify/json_view.hpp"
#include "verify/run_totals.hpp"

namespace trainio::verify {

std::string verify_run(const std::string& folder, Checks& checks) {
  const std::string path = util::join(folder, "summary.json");
  // The summary is read as text and tokens (its size again, not a DOM's ten times that).
  std::string text;
  if (!read_text_file(path, text)) throw usage_error(fmt::format("'{}' holds no summary.json", folder), "name a results folder of trainio run");
  JsonDoc doc;
  try {
    doc.parse(text);
  } catch (const JsonError& e) {
    throw usage_error(fmt::format("'{}' is not valid JSON: {}", path, e.what()),
                      "the run did not finish writing its results, or the file was edited: rerun it or leave it out");
  }
  const JsonValue summary = doc.root();
  if (!summary.is_object() || !summary.contains("metric") || !summary.at("metric").is_object())
    throw usage_error(fmt::format("'{}' is not a trainio or DLIO summary (no \"metric\")", path),
                      "give results folders written by trainio run (or DLIO)");
  const JsonValue ranks = find(summary, "trainio/context/ranks");
  if (!ranks.valid() || !ranks.is_unsigned() || ranks.u64() == 0 || ranks.u64() > 1'000'000'000)
    throw usage_error(fmt::format("'{}' is not a trainio summary (no trainio.context.ranks)", path),
                      "verify needs the records a trainio run keeps; DLIO's results have none");
  const JsonValue size = find(summary, "metric/checkpoint_size_GB");
  RunTotals totals;
  read_ranks(folder, static_cast<int>(ranks.u64()), size.valid() && size.is_number() ? size.f64() : 0.0, totals, checks);
  check_summary(folder, summary, totals, checks);
  check_csvs(folder, totals, checks);
  check_capacity(folder, summary, totals, checks);
  check_async_checkpoints(folder, summary, static_cast<int>(ranks.u64()), checks);
  check_reshard_loads(folder, summary, static_cast<int>(ranks.u64()), checks);
  if (totals.incomplete_ranks == 0) return {};
  const JsonValue reason = find(summary, "trainio/stopped/reason");
  const JsonValue epoch = find(summary, "trainio/stopped/epoch");
  return fmt::format("incomplete: {} stopped the run in epoch {}; these are the figures of what ran before",
                     reason.valid() && reason.is_string() ? reason.str() : "a signal", epoch.valid() ? std::string(epoch.raw()) : "?");
}

}  // namespace trainio::verify
