#include "report/run_results.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "storage/fs.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"
#include "util/units.hpp"

namespace trainio::report {

namespace {

using json = nlohmann::json;

std::optional<RunResult> read_run(const std::string& folder) {
  const std::string path = util::join(folder, "summary.json");
  const auto text = storage::read_small_file(path);
  if (!text) return std::nullopt;
  RunResult r;
  r.folder = folder;
  try {
    r.summary = json::parse(*text);
  } catch (const json::exception& e) {
    throw usage_error(fmt::format("'{}' is not valid JSON: {}", path, e.what()),
                      "the run did not finish writing its results, or the file was edited: rerun it or leave it out");
  }
  if (!r.summary.is_object() || !r.summary.contains("metric"))
    throw usage_error(fmt::format("'{}' is not a trainio or DLIO summary (no \"metric\")", path),
                      "give results folders written by trainio run (or DLIO)");
  const auto& t = r.summary.value("trainio", json::object());
  r.workload = t.contains("workload") ? t["workload"].value("name", "") : "";
  r.start = r.summary.value("start", "");
  r.end = r.summary.value("end", "");
  return r;
}

// The largest value of trainio.epochs[].train.<field>.<key> over the epochs.
std::optional<double> worst_epoch(const RunResult& run, const char* field, const char* key) {
  const auto& t = run.summary.value("trainio", json::object());
  if (!t.contains("epochs")) return std::nullopt;
  std::optional<double> worst;
  for (const auto& e : t["epochs"]) {
    const auto& f = e.value("train", json::object()).value(field, json::object());
    if (f.contains(key) && f[key].is_number()) worst = std::max(worst.value_or(f[key].get<double>()), f[key].get<double>());
  }
  return worst;
}

std::optional<double> at_path(const json& root, const std::string& dotted) {
  const json* node = &root;
  std::size_t start = 0;
  while (start <= dotted.size()) {
    const auto dot = dotted.find('.', start);
    const std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (node->is_object() && node->contains(part)) {
      node = &(*node)[part];
    } else if (node->is_array() && !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit) &&
               std::stoul(part) < node->size()) {
      node = &(*node)[std::stoul(part)];
    } else {
      return std::nullopt;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (node->is_number()) return node->get<double>();
  return std::nullopt;
}

}  // namespace

std::vector<RunResult> load_runs(const std::string& path) {
  if (!storage::is_dir(path))
    throw usage_error(fmt::format("'{}' is not a folder", path), "give a results folder of trainio run, or a folder of them");
  if (auto one = read_run(path)) return {*one};
  std::vector<std::string> names = storage::list_dir(path);
  std::sort(names.begin(), names.end());
  std::vector<RunResult> runs;
  for (const auto& name : names) {
    const std::string sub = util::join(path, name);
    if (!storage::is_dir(sub)) continue;
    if (auto r = read_run(sub)) runs.push_back(std::move(*r));
  }
  if (runs.empty())
    throw usage_error(fmt::format("'{}' holds no run: no summary.json in it or in its folders", path),
                      "give the results folder of a run (--output of trainio run), or a folder of such folders");
  return runs;
}

const std::vector<Figure>& known_figures() {
  static const std::vector<Figure> figures = {
      {"train_throughput_mean_samples_per_second", "samples/s", true, "training samples/s (DLIO's formula, mean over epochs)"},
      {"train_au_mean_percentage", "%", true, "accelerator utilisation (mean over epochs)"},
      {"train_io_mean_MB_per_second", "MiB/s", true, "DLIO's nominal MB/s (samples/s x record size)"},
      {"read_bytes_per_second", "B/s", true, "bytes the storage calls returned per second (mean over epochs)"},
      {"eval_throughput_mean_samples_per_second", "samples/s", true, "evaluation samples/s"},
      {"batch_wait_p99_seconds", "s", false, "99th percentile of the wait for a batch (worst epoch)"},
      {"sample_read_p99_seconds", "s", false, "99th percentile of a sample's read (worst epoch)"},
      {"save_checkpoint_io_mean_GB_per_second", "GiB/s", true, "checkpoint save bandwidth"},
      {"load_checkpoint_io_mean_GB_per_second", "GiB/s", true, "checkpoint load bandwidth"},
      {"save_checkpoint_duration_mean_seconds", "s", false, "time to save a checkpoint (slowest rank)"},
      {"load_checkpoint_duration_mean_seconds", "s", false, "time to load a checkpoint (slowest rank)"},
  };
  return figures;
}

std::string figure_text(double value, const std::string& unit) {
  if (unit == "B/s") return util::format_rate(value);
  if (unit == "s") return util::format_duration(value);
  if (unit.empty()) return fmt::format("{:.6g}", value);
  return fmt::format("{:.2f} {}", value, unit);
}

std::optional<double> figure_of(const RunResult& run, const std::string& name) {
  const auto& s = run.summary;
  if (name == "read_bytes_per_second") return at_path(s, "trainio.train.read_bytes_per_second_mean");
  if (name == "batch_wait_p99_seconds") return worst_epoch(run, "batch_wait_seconds", "p99");
  if (name == "sample_read_p99_seconds") return worst_epoch(run, "sample_read_seconds", "p99");
  for (const auto& f : known_figures())
    if (name == f.name) return at_path(s, std::string("metric.") + f.name);
  return at_path(s, name);
}

bool higher_is_better(const std::string& name) {
  for (const auto& f : known_figures())
    if (name == f.name) return f.higher_is_better;
  for (const char* word : {"seconds", "duration", "latency", "wait", "_p9"})
    if (name.find(word) != std::string::npos) return false;
  return true;
}

}  // namespace trainio::report
