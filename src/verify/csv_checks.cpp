// per_epoch.csv and per_rank.csv against what the records rebuild, cell by cell, to the decimals
// each column is printed with.
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <functional>
#include <optional>

#include "util/paths.hpp"
#include "verify/run_totals.hpp"

namespace trainio::verify {

namespace {

// A row by column name, over one header shared by every row of the file.
class Row {
 public:
  Row(const std::map<std::string, std::size_t>& columns, std::vector<std::string> cells) : columns_(columns), cells_(std::move(cells)) {}
  const std::string* at(const std::string& column) const {
    const auto it = columns_.find(column);
    return it == columns_.end() || it->second >= cells_.size() ? nullptr : &cells_[it->second];
  }

 private:
  const std::map<std::string, std::size_t>& columns_;
  std::vector<std::string> cells_;
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t from = 0;
  while (true) {
    const std::size_t comma = line.find(',', from);
    cells.push_back(line.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return cells;
}

// A CSV file's rows one at a time, over its header.
class CsvRows {
 public:
  explicit CsvRows(const std::string& path) : in_(path) {
    std::string line;
    found_ = in_ && std::getline(in_, line);
    if (!found_) return;
    const std::vector<std::string> header = split(line);
    for (std::size_t i = 0; i < header.size(); ++i) columns_[header[i]] = i;
  }
  bool found() const { return found_; }
  // The next row, held until pop(); null at the end of the file.
  const Row* peek() {
    if (!row_ && found_ && std::getline(in_, line_)) row_.emplace(columns_, split(line_));
    return row_ ? &*row_ : nullptr;
  }
  void pop() {
    row_.reset();
    ++rows_;
  }
  std::size_t rows() const { return rows_; }

 private:
  std::ifstream in_;
  bool found_ = false;
  std::map<std::string, std::size_t> columns_;
  std::string line_;
  std::optional<Row> row_;
  std::size_t rows_ = 0;
};

class RowChecks {
 public:
  RowChecks(const Row& row, std::string name, Checks& checks) : row_(row), name_(std::move(name)), checks_(checks) {}
  void cell(const std::string& column, std::optional<double> v, int decimals) const {
    const std::string* text = row_.at(column);
    if (text == nullptr) return checks_.problem(name_ + column, "no such column");
    checks_.cell(name_ + column, *text, v, decimals < 0 ? kExact : printed(decimals));
  }
  void text(const std::string& column, const std::string& v) const {
    const std::string* text = row_.at(column);
    const nlohmann::json reported = text == nullptr ? nlohmann::json() : nlohmann::json(*text);
    checks_.text(name_ + column, text == nullptr ? nullptr : &reported, v);
  }

 private:
  const Row& row_;
  std::string name_;
  Checks& checks_;
};

// The (epoch, phase) a row names; none when it names none.
std::optional<std::pair<std::uint64_t, std::string>> key_of(const Row& row) {
  const std::string* epoch = row.at("epoch");
  const std::string* phase = row.at("phase");
  if (!epoch || !phase || epoch->empty() || epoch->size() > 18 || epoch->find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::pair{std::stoull(*epoch), *phase};
}

// Whether a row may still belong to a phase to come: of a later epoch, or the evaluation of the
// epoch whose training is being read (the run writes an epoch's training rows before its evaluation's).
bool to_come(const std::pair<std::uint64_t, std::string>& row, const std::pair<std::uint64_t, std::string>& at) {
  return row.first > at.first || (row.first == at.first && at.second == "train" && row.second != "train");
}

std::optional<double> percent(std::optional<double> v) { return v ? std::optional<double>(*v * 100) : std::nullopt; }

}  // namespace

struct CsvChecks::Files {
  CsvRows epochs, ranks;
};

CsvChecks::CsvChecks(const std::string& folder, Checks& checks)
    : files_(new Files{CsvRows(util::join(folder, "per_epoch.csv")), CsvRows(util::join(folder, "per_rank.csv"))}), checks_(checks) {}

CsvChecks::~CsvChecks() { delete files_; }

void CsvChecks::epoch(const RunTotals& totals) {
  Checks& checks = checks_;
  // The run writes an epoch's training rows before its evaluation's: "train" first.
  std::vector<std::pair<const std::pair<std::uint64_t, std::string>*, const PhaseTotals*>> order;
  for (const auto& [key, phase] : totals.phases)
    if (key.second == "train") order.emplace_back(&key, &phase);
  for (const auto& [key, phase] : totals.phases)
    if (key.second != "train") order.emplace_back(&key, &phase);
  for (const auto& [at, t] : order) {
    const auto& key = *at;
    // Rows before this phase's that name no phase read so far are of none the records hold.
    for (const Row* row = files_->epochs.peek(); row != nullptr; row = files_->epochs.peek()) {
      const auto k = key_of(*row);
      if (k && to_come(*k, key)) break;
      if (k == key) {
        const RowChecks r(*row, fmt::format("per_epoch.csv epoch {} {}: ", t->epoch, t->kind), checks);
        const CacheVerdict cache = cache_verdict(t->io.page_cache);
        r.cell("steps_per_rank", static_cast<double>(t->steps()), -1);
        r.cell("duration_seconds", t->duration(), 6);
        r.cell("au_percentage", percent(t->au()), 4);
        r.cell("throughput_samples_per_second", t->throughput(), 4);
        r.cell("dlio_throughput_samples_per_second", t->throughput_dlio(), 4);
        r.cell("samples", static_cast<double>(t->samples), -1);
        r.cell("sample_bytes", static_cast<double>(t->sample_bytes), -1);
        r.cell("bytes_read", static_cast<double>(t->bytes_read()), -1);
        r.cell("read_bytes_per_second", t->duration() > 0 ? static_cast<double>(t->bytes_read()) / t->duration() : 0.0, 1);
        r.cell("storage_read_bytes",
               t->process_read_known == totals.ranks ? std::optional<double>(t->process_read_bytes) : std::nullopt, -1);
        r.cell("served_from_page_cache", cache.verdict == "page_cache" ? 1 : 0, -1);
        r.text("page_cache", cache.verdict);
        r.cell("page_cache_resident_fraction", cache.resident_fraction, 4);
        r.cell("batch_wait_p50_seconds", static_cast<double>(t->wait.quantile(0.5)) * 1e-9, 9);
        r.cell("batch_wait_p99_seconds", static_cast<double>(t->wait.quantile(0.99)) * 1e-9, 9);
        r.cell("sample_read_p50_seconds", static_cast<double>(t->sample_read.quantile(0.5)) * 1e-9, 9);
        r.cell("sample_read_p99_seconds", static_cast<double>(t->sample_read.quantile(0.99)) * 1e-9, 9);
        r.cell("slowest_rank", t->slowest().rank, -1);
        r.cell("fastest_rank", t->fastest().rank, -1);
        r.cell("cpu_user_seconds", t->cpu_user(), 3);
        r.cell("cpu_sys_seconds", t->cpu_sys(), 3);
        r.cell("cpu_polling_seconds", t->cpu_polling(), 3);
      } else {
        checks.problem("per_epoch.csv", "a row of a phase the records do not hold");
      }
      files_->epochs.pop();
    }
    for (const Row* row = files_->ranks.peek(); row != nullptr; row = files_->ranks.peek()) {
      const auto k = key_of(*row);
      if (k && to_come(*k, key)) break;
      const std::string* rank = row->at("rank");
      const std::size_t r = rank && !rank->empty() ? std::strtoull(rank->c_str(), nullptr, 10) : ~std::size_t{0};
      if (k != key || r >= t->ranks.size() || t->ranks[r].rank != static_cast<int>(r)) {
        checks.problem("per_rank.csv", "a row of a phase or rank the records do not hold");
        files_->ranks.pop();
        continue;
      }
      const RankPhase& p = t->ranks[r];
      const RowChecks c(*row, fmt::format("per_rank.csv epoch {} {} rank {}: ", t->epoch, t->kind, p.rank), checks);
      c.text("host", p.host < static_cast<int>(totals.hostnames.size()) ? totals.hostnames[static_cast<std::size_t>(p.host)] : "?");
      c.cell("duration_seconds", p.duration, 6);
      c.cell("samples", static_cast<double>(p.samples), -1);
      c.cell("bytes_read", static_cast<double>(p.bytes_read), -1);
      c.cell("read_bytes_per_second", p.duration > 0 ? static_cast<double>(p.bytes_read) / p.duration : 0.0, 1);
      c.cell("throughput_samples_per_second", p.throughput, 4);
      c.cell("dlio_throughput_samples_per_second", p.throughput_dlio, 4);
      c.cell("au_percentage", percent(p.au), 4);
      c.cell("cpu_user_seconds", p.cpu_user, 3);
      c.cell("cpu_sys_seconds", p.cpu_sys, 3);
      c.cell("cpu_polling_seconds", p.cpu_polling, 3);
      c.cell("batch_wait_seconds", p.batch_wait, 6);
      c.cell("compute_seconds", p.compute, 6);
      c.cell("barrier_seconds", p.barrier, 6);
      files_->ranks.pop();
    }
  }
}

void CsvChecks::finish(const RunTotals& totals) {
  for (; files_->epochs.peek() != nullptr; files_->epochs.pop()) checks_.problem("per_epoch.csv", "a row of a phase the records do not hold");
  for (; files_->ranks.peek() != nullptr; files_->ranks.pop())
    checks_.problem("per_rank.csv", "a row of a phase or rank the records do not hold");
  const EpochSums& sums = totals.epochs;
  if (!files_->epochs.found()) checks_.problem("per_epoch.csv", "missing");
  else if (files_->epochs.rows() != sums.phases)
    checks_.problem("per_epoch.csv", fmt::format("{} rows, the records hold {} phases", files_->epochs.rows(), sums.phases));
  if (!files_->ranks.found()) checks_.problem("per_rank.csv", "missing");
  else if (files_->ranks.rows() != sums.rank_phases)
    checks_.problem("per_rank.csv", fmt::format("{} rows, the records hold {} ranks' phases", files_->ranks.rows(), sums.rank_phases));
}

}  // namespace trainio::verify
