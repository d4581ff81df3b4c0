#include "mlperf/rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "plan/layout.hpp"
#include "util/units.hpp"

namespace trainio::mlperf {

namespace {

// MLPerf Storage v1.0-v3.0's training benchmarks and v2.0's checkpointing ones (mlcommons/storage:
// mlpstorage/config.py for the CLOSED process counts). The V100 workloads and DLIO's own llama_*
// files are not MLPerf benchmarks.
constexpr Benchmark kBenchmarks[] = {
    {"unet3d_a100", Kind::training, 0},      {"unet3d_h100", Kind::training, 0},
    {"unet3d_b200", Kind::training, 0},      {"resnet50_a100", Kind::training, 0},
    {"resnet50_h100", Kind::training, 0},    {"cosmoflow_a100", Kind::training, 0},
    {"cosmoflow_h100", Kind::training, 0},   {"retinanet_b200", Kind::training, 0},
    {"llama3_8b", Kind::checkpointing, 8},   {"llama3_70b", Kind::checkpointing, 64},
    {"llama3_405b", Kind::checkpointing, 512}, {"llama3_1t", Kind::checkpointing, 1024},
};

// Submission guidelines, Table 2 (CLOSED) and the OPEN table; mlpstorage/rules.py lists the same.
// workflow.* only picks the phases of a run (mlpstorage checks them separately); output.* and the
// folders only say where things go.
const std::set<std::string> kClosed = {
    "dataset.num_files_train", "dataset.num_subfolders_train", "dataset.data_folder", "reader.read_threads",
    "reader.computation_threads", "reader.transfer_size", "reader.odirect", "reader.prefetch_size",
    "checkpoint.checkpoint_folder", "storage.storage_type", "storage.storage_root", "output.folder",
    "output.log_file", "workflow.generate_data"};
const std::set<std::string> kOpen = {"framework", "dataset.format", "dataset.num_samples_per_file",
                                     "reader.data_loader"};

std::uint64_t ceil_div(double a, double b) { return static_cast<std::uint64_t>(std::ceil(a / b)); }

}  // namespace

const Benchmark* find_benchmark(const std::string& workload) {
  for (const auto& b : kBenchmarks)
    if (workload == b.workload) return &b;
  return nullptr;
}

DatasetSize required_dataset(const config::Workload& w, std::uint64_t accelerators, std::uint64_t hosts,
                             std::uint64_t host_memory_bytes) {
  const plan::DatasetLayout layout(w);
  DatasetSize s;
  s.record_bytes = std::max(1.0, layout.nominal_record_bytes());
  const auto batch = static_cast<std::uint64_t>(std::max<std::int64_t>(1, w.reader.batch_size));
  const auto per_file = std::max<std::uint64_t>(1, layout.samples_per_file());
  s.samples_for_steps = kStepsPerEpoch * batch * accelerators;
  // Rounded up so the dataset is at least 5x memory (mlpstorage rounds down, a few bytes short).
  s.samples_for_memory =
      ceil_div(static_cast<double>(kMemoryMultiple) * static_cast<double>(hosts) * static_cast<double>(host_memory_bytes),
               s.record_bytes);
  s.samples = std::max(s.samples_for_steps, s.samples_for_memory);
  s.files = (s.samples + per_file - 1) / per_file;
  s.subfolders = s.files > kFilesPerFolder ? (s.files + kFilesPerFolder - 1) / kFilesPerFolder : 0;
  s.bytes = static_cast<double>(s.files) * static_cast<double>(per_file) * s.record_bytes;
  return s;
}

std::string override_line(const DatasetSize& need) {
  std::string out = fmt::format("dataset.num_files_train={}", need.files);
  if (need.subfolders > 0) out += fmt::format(" dataset.num_subfolders_train={}", need.subfolders);
  return out;
}

std::optional<std::string> dataset_shortfall(const config::Workload& w, const DatasetSize& need,
                                             std::uint64_t accelerators, std::uint64_t hosts,
                                             std::uint64_t host_memory_bytes) {
  const plan::DatasetLayout layout(w);
  const std::uint64_t files = layout.num_files(plan::Split::train);
  if (files >= need.files) return std::nullopt;
  return fmt::format(
      "MLPerf Storage asks for at least {} files ({} samples, {}) for {} accelerator{} on {} host{} of {}: the larger "
      "of 500 steps x batch {} x {} accelerators = {} samples and 5 x the hosts' memory = {} samples; this dataset "
      "has {} files ({} samples, {}). Set {}",
      util::format_count(need.files), util::format_count(need.samples), util::format_bytes(need.bytes), accelerators,
      accelerators == 1 ? "" : "s", hosts, hosts == 1 ? "" : "s", util::format_bytes(static_cast<double>(host_memory_bytes)),
      w.reader.batch_size, accelerators, util::format_count(need.samples_for_steps),
      util::format_count(need.samples_for_memory), util::format_count(files),
      util::format_count(files * layout.samples_per_file()),
      util::format_bytes(static_cast<double>(layout.total_data_bytes(plan::Split::train))), override_line(need));
}

std::string division_of_key(const std::string& key) {
  if (key == "train.seed") return "seed";
  if (kClosed.count(key)) return "closed";
  if (kOpen.count(key)) return "open";
  return "";
}

}  // namespace trainio::mlperf
