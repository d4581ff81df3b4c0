#include "report/run_results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>

#include "storage/fs.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"
#include "util/units.hpp"

namespace trainio::report {

namespace {

std::optional<RunResult> read_run(const std::string& folder) {
  const std::string path = util::join(folder, "summary.json");
  const auto text = storage::read_small_file(path);
  if (!text) return std::nullopt;
  RunResult r;
  r.folder = folder;
  try {
    r.summary = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(fmt::format("'{}' is not valid JSON: {}", path, e.what()),
                      "the run did not finish writing its results, or the file was edited: rerun it or leave it out");
  }
  if (!r.summary.is_object() || !r.summary.contains("metric") || !r.summary["metric"].is_object())
    throw usage_error(fmt::format("'{}' is not a trainio or DLIO summary (no \"metric\")", path),
                      "give results folders written by trainio run (or DLIO)");
  r.workload = text_at(r.summary, "trainio.workload.name");
  r.start = text_at(r.summary, "start");
  r.end = text_at(r.summary, "end");
  return r;
}

// The largest value of trainio.epochs[].train.<field>.<key> over the epochs.
std::optional<double> worst_epoch(const RunResult& run, const char* field, const char* key) {
  const nlohmann::json* epochs = node_at(run.summary, "trainio.epochs");
  if (!epochs || !epochs->is_array()) return std::nullopt;
  std::optional<double> worst;
  for (const auto& e : *epochs)
    if (auto v = number_at(e, fmt::format("train.{}.{}", field, key))) worst = std::max(worst.value_or(*v), *v);
  return worst;
}

// Training's reads of the dataset's storage per epoch: the cache tier's backing reads (staging's
// included), or every read when there is no tier.
std::optional<double> backing_bytes_per_epoch(const RunResult& run) {
  const nlohmann::json* epochs = node_at(run.summary, "trainio.epochs");
  if (!epochs || !epochs->is_array() || epochs->empty()) return std::nullopt;
  double total = number_at(run.summary, "trainio.cache.staged.backing_read_bytes").value_or(0);
  for (const auto& e : *epochs) {
    auto v = number_at(e, "train.cache.backing_read_bytes");
    if (!v) v = number_at(e, "train.bytes_read");
    if (!v) return std::nullopt;
    total += *v;
  }
  return total / static_cast<double>(epochs->size());
}

}  // namespace

const nlohmann::json* node_at(const nlohmann::json& root, const std::string& dotted) {
  const nlohmann::json* node = &root;
  std::size_t start = 0;
  while (true) {
    const auto dot = dotted.find('.', start);
    const std::string_view part = std::string_view(dotted).substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::size_t index = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), index);
    if (node->is_object()) {
      const auto it = node->find(std::string(part));
      if (it == node->end()) return nullptr;
      node = &*it;
    } else if (node->is_array() && !part.empty() && error == std::errc() && end == part.data() + part.size() &&
               index < node->size()) {
      node = &(*node)[index];
    } else {
      return nullptr;
    }
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

std::optional<double> number_at(const nlohmann::json& root, const std::string& dotted) {
  const nlohmann::json* node = node_at(root, dotted);
  if (node && node->is_number()) return node->get<double>();
  return std::nullopt;
}

std::string text_at(const nlohmann::json& root, const std::string& dotted) {
  const nlohmann::json* node = node_at(root, dotted);
  return node && node->is_string() ? node->get<std::string>() : std::string();
}

namespace {

// The runs in the folders directly under `path`, in name order; a campaign's failed attempts
// (moved aside as <run>.failed-N) are not runs.
std::vector<RunResult> runs_under(const std::string& path, std::vector<std::string>* folders) {
  std::vector<std::string> names = storage::list_dir(path);
  std::sort(names.begin(), names.end());
  std::vector<RunResult> runs;
  for (const auto& name : names) {
    const std::string sub = util::join(path, name);
    if (!storage::is_dir(sub) || name.find(".failed-") != std::string::npos) continue;
    if (auto r = read_run(sub)) runs.push_back(std::move(*r));
    else if (folders) folders->push_back(sub);
  }
  return runs;
}

}  // namespace

std::optional<std::string> incomplete_reason(const RunResult& run) {
  const nlohmann::json* complete = node_at(run.summary, "trainio.complete");
  if (complete == nullptr || !complete->is_boolean() || complete->get<bool>()) return std::nullopt;
  const nlohmann::json* reason = node_at(run.summary, "trainio.stopped.reason");
  const nlohmann::json* epoch = node_at(run.summary, "trainio.stopped.epoch");
  const nlohmann::json* phase = node_at(run.summary, "trainio.stopped.phase");
  return fmt::format("{} stopped it in epoch {} ({})", reason && reason->is_string() ? reason->get<std::string>() : "a signal",
                     epoch ? epoch->dump() : "?", phase && phase->is_string() ? phase->get<std::string>() : "?");
}

std::vector<RunResult> load_runs(const std::string& path) {
  if (!storage::is_dir(path))
    throw usage_error(fmt::format("'{}' is not a folder", path), "give a results folder of trainio run, or a folder of them");
  if (auto one = read_run(path)) return {*one};
  std::vector<std::string> folders;
  std::vector<RunResult> runs = runs_under(path, &folders);
  // A folder of folders of runs (a sweep: DIR/<point>/run<N>), when no run is one level down.
  if (runs.empty())
    for (const auto& folder : folders)
      for (auto& r : runs_under(folder, nullptr)) runs.push_back(std::move(r));
  if (runs.empty())
    throw usage_error(fmt::format("'{}' holds no run: no summary.json in it, in its folders or in theirs", path),
                      "give the results folder of a run (--output of trainio run), a folder of such folders, or a sweep's");
  return runs;
}

std::string kept_table(const RunResult& run) {
  return storage::read_small_file(util::join(run.folder, "summary.txt")).value_or(std::string());
}

const std::vector<Figure>& known_figures() {
  static const std::vector<Figure> figures = {
      {"train_throughput_mean_samples_per_second", "samples/s", true, "training samples/s (DLIO's formula, mean over epochs)"},
      {"train_au_mean_percentage", "%", true, "accelerator utilisation (mean over epochs)"},
      {"train_io_mean_MB_per_second", "MiB/s", true, "DLIO's nominal MB/s (samples/s x record size)"},
      {"read_bytes_per_second", "B/s", true,
       "bytes the storage calls returned per second (mean over epochs); reported, never judged (less read "
       "amplification lowers it)", true, false},
      {"eval_throughput_mean_samples_per_second", "samples/s", true, "evaluation samples/s"},
      {"batch_wait_p99_seconds", "s", false, "99th percentile of the wait for a batch (worst epoch; compared only when named)",
       false},
      {"sample_read_p99_seconds", "s", false, "99th percentile of a sample's read (worst epoch; compared only when named)",
       false},
      {"backing_read_bytes_per_epoch", "B", false,
       "bytes training read from the dataset's storage per epoch: behind a cache tier, its fills, misses and "
       "staging; without one, every read (compare a run with a tier against one without)", true, true},
      {"cache_hit_ratio_bytes", "", true, "sample bytes of training the cache tier served (every epoch together; 0 for a run without a tier)", true, true},
      {"save_checkpoint_io_mean_GB_per_second", "GiB/s", true, "checkpoint save bandwidth"},
      {"load_checkpoint_io_mean_GB_per_second", "GiB/s", true, "checkpoint load bandwidth"},
      {"save_checkpoint_duration_mean_seconds", "s", false, "time to save a checkpoint (slowest rank)"},
      {"load_checkpoint_duration_mean_seconds", "s", false, "time to load a checkpoint (slowest rank)"},
  };
  return figures;
}

std::string figure_text(double value, const std::string& unit) {
  if (unit == "B/s") return util::format_rate(value);
  if (unit == "B") return util::format_bytes(value);
  if (unit == "s") return util::format_duration(value);
  if (unit.empty()) return fmt::format("{:.6g}", value);
  return fmt::format("{:.2f} {}", value, unit);
}

std::optional<double> figure_of(const RunResult& run, const std::string& name) {
  const auto& s = run.summary;
  if (name == "read_bytes_per_second") return number_at(s, "trainio.train.read_bytes_per_second_mean");
  if (name == "batch_wait_p99_seconds") return worst_epoch(run, "batch_wait_seconds", "p99");
  if (name == "backing_read_bytes_per_epoch") return backing_bytes_per_epoch(run);
  if (name == "cache_hit_ratio_bytes") {
    // A run without a tier had nothing served by one: 0, so that compare shows it against a run with one.
    if (node_at(s, "trainio.cache")) return number_at(s, "trainio.cache.train.hit_ratio_bytes");
    return node_at(s, "trainio.epochs") ? std::optional<double>(0.0) : std::nullopt;
  }
  if (name == "sample_read_p99_seconds") return worst_epoch(run, "sample_read_seconds", "p99");
  for (const auto& f : known_figures())
    if (name == f.name) return number_at(s, std::string("metric.") + f.name);
  return number_at(s, name);
}

const Figure* find_figure(const std::string& name) {
  for (const auto& f : known_figures())
    if (name == f.name) return &f;
  return nullptr;
}

bool higher_is_better(const std::string& name) {
  for (const auto& f : known_figures())
    if (name == f.name) return f.higher_is_better;
  for (const char* word : {"seconds", "duration", "latency", "wait", "_p9"})
    if (name.find(word) != std::string::npos) return false;
  return true;
}

}  // namespace trainio::report
