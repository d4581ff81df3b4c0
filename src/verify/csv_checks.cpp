// per_epoch.csv and per_rank.csv against what the records rebuild, cell by cell, to the decimals
// each column is printed with.
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <sstream>

#include "util/paths.hpp"
#include "verify/run_totals.hpp"

namespace trainio::verify {

namespace {

using Row = std::map<std::string, std::string>;

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

// Each row by its key columns.
std::map<std::string, Row> read_csv(const std::string& path, const std::vector<std::string>& key_columns, bool& found) {
  std::map<std::string, Row> rows;
  std::ifstream in(path);
  found = static_cast<bool>(in);
  std::string line;
  if (!std::getline(in, line)) return rows;
  const std::vector<std::string> header = split(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = split(line);
    Row row;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    std::string key;
    for (const auto& k : key_columns) key += row[k] + "/";
    rows[key] = std::move(row);
  }
  return rows;
}

class RowChecks {
 public:
  RowChecks(const Row& row, std::string name, Checks& checks) : row_(row), name_(std::move(name)), checks_(checks) {}
  void cell(const std::string& column, std::optional<double> v, int decimals) const {
    const auto it = row_.find(column);
    if (it == row_.end()) return checks_.problem(name_ + column, "no such column");
    checks_.cell(name_ + column, it->second, v, decimals < 0 ? kExact : printed(decimals));
  }
  void text(const std::string& column, const std::string& v) const {
    const auto it = row_.find(column);
    const nlohmann::json reported = it == row_.end() ? nlohmann::json() : nlohmann::json(it->second);
    checks_.text(name_ + column, it == row_.end() ? nullptr : &reported, v);
  }

 private:
  const Row& row_;
  std::string name_;
  Checks& checks_;
};

std::optional<double> percent(std::optional<double> v) { return v ? std::optional<double>(*v * 100) : std::nullopt; }

}  // namespace

void check_csvs(const std::string& folder, const RunTotals& totals, Checks& checks) {
  bool found = false;
  const auto epochs = read_csv(util::join(folder, "per_epoch.csv"), {"epoch", "phase"}, found);
  if (!found) checks.problem("per_epoch.csv", "missing");
  const auto ranks = read_csv(util::join(folder, "per_rank.csv"), {"epoch", "phase", "rank"}, found);
  if (!found) checks.problem("per_rank.csv", "missing");
  if (epochs.size() != totals.phases.size())
    checks.problem("per_epoch.csv", fmt::format("{} rows, the records hold {} phases", epochs.size(), totals.phases.size()));
  for (const auto& [key, t] : totals.phases) {
    const std::string id = fmt::format("{}/{}/", t.epoch, t.kind);
    const auto it = epochs.find(id);
    if (it == epochs.end()) {
      if (found) checks.problem(fmt::format("per_epoch.csv epoch {} {}", t.epoch, t.kind), "no row");
    } else {
      const RowChecks r(it->second, fmt::format("per_epoch.csv epoch {} {}: ", t.epoch, t.kind), checks);
      const CacheVerdict cache = cache_verdict(t.io.page_cache);
      r.cell("steps_per_rank", static_cast<double>(t.steps()), -1);
      r.cell("duration_seconds", t.duration(), 6);
      r.cell("au_percentage", percent(t.au()), 4);
      r.cell("throughput_samples_per_second", t.throughput(), 4);
      r.cell("dlio_throughput_samples_per_second", t.throughput_dlio(), 4);
      r.cell("samples", static_cast<double>(t.samples), -1);
      r.cell("sample_bytes", static_cast<double>(t.sample_bytes), -1);
      r.cell("bytes_read", static_cast<double>(t.bytes_read()), -1);
      r.cell("read_bytes_per_second", t.duration() > 0 ? static_cast<double>(t.bytes_read()) / t.duration() : 0.0, 1);
      r.cell("storage_read_bytes",
             t.process_read_known == totals.ranks ? std::optional<double>(t.process_read_bytes) : std::nullopt, -1);
      r.cell("served_from_page_cache", cache.verdict == "page_cache" ? 1 : 0, -1);
      r.text("page_cache", cache.verdict);
      r.cell("page_cache_resident_fraction", cache.resident_fraction, 4);
      r.cell("batch_wait_p50_seconds", static_cast<double>(t.wait.quantile(0.5)) * 1e-9, 9);
      r.cell("batch_wait_p99_seconds", static_cast<double>(t.wait.quantile(0.99)) * 1e-9, 9);
      r.cell("sample_read_p50_seconds", static_cast<double>(t.sample_read.quantile(0.5)) * 1e-9, 9);
      r.cell("sample_read_p99_seconds", static_cast<double>(t.sample_read.quantile(0.99)) * 1e-9, 9);
      r.cell("slowest_rank", t.slowest().rank, -1);
      r.cell("fastest_rank", t.fastest().rank, -1);
      r.cell("cpu_user_seconds", t.cpu_user(), 3);
      r.cell("cpu_sys_seconds", t.cpu_sys(), 3);
      r.cell("cpu_polling_seconds", t.cpu_polling(), 3);
    }
    for (const RankPhase& p : t.ranks) {
      const auto row = ranks.find(fmt::format("{}{}/", id, p.rank));
      const std::string name = fmt::format("per_rank.csv epoch {} {} rank {}: ", t.epoch, t.kind, p.rank);
      if (row == ranks.end()) {
        if (found) checks.problem(name, "no row");
        continue;
      }
      const RowChecks r(row->second, name, checks);
      r.text("host", p.host < static_cast<int>(totals.hostnames.size()) ? totals.hostnames[static_cast<std::size_t>(p.host)] : "?");
      r.cell("duration_seconds", p.duration, 6);
      r.cell("samples", static_cast<double>(p.samples), -1);
      r.cell("bytes_read", static_cast<double>(p.bytes_read), -1);
      r.cell("read_bytes_per_second", p.duration > 0 ? static_cast<double>(p.bytes_read) / p.duration : 0.0, 1);
      r.cell("throughput_samples_per_second", p.throughput, 4);
      r.cell("dlio_throughput_samples_per_second", p.throughput_dlio, 4);
      r.cell("au_percentage", percent(p.au), 4);
      r.cell("cpu_user_seconds", p.cpu_user, 3);
      r.cell("cpu_sys_seconds", p.cpu_sys, 3);
      r.cell("cpu_polling_seconds", p.cpu_polling, 3);
    }
  }
}

}  // namespace trainio::verify
