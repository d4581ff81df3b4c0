// `trainio datasize`: the training dataset MLPerf Storage asks for, and the override that sets it.
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "config/load.hpp"
#include "mlperf/rules.hpp"
#include "plan/layout.hpp"
#include "util/error.hpp"
#include "util/host_info.hpp"
#include "util/units.hpp"

namespace trainio::cli {

namespace {

// A bare number is GiB, as mlpstorage's --client-host-memory-in-gb; otherwise a size with its unit.
std::uint64_t host_memory(const std::string& text) {
  if (text.empty()) return util::host_info().memory_bytes;
  char* end = nullptr;
  const double gib = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0' && gib > 0) return static_cast<std::uint64_t>(gib * 1024.0 * 1024.0 * 1024.0);
  const auto bytes = util::parse_bytes(text);
  if (!bytes || *bytes == 0)
    throw usage_error(fmt::format("--host-memory '{}' is not a size", text),
                      "give each host's memory as 128 (GiB, as mlpstorage), 128GiB or 137GB");
  return *bytes;
}

}  // namespace

int datasize_command(const DatasizeCommand& cmd) {
  return guarded([&] {
    const auto split = config::split_args(cmd.words);
    if (split.workload.empty())
      throw usage_error("datasize needs a workload", "e.g. trainio datasize unet3d_a100 --accelerators 16 --hosts 2 --host-memory 128");
    const config::Workload w = config::load(split.workload, split.overrides);
    const auto memory = host_memory(cmd.host_memory);
    const auto accelerators = static_cast<std::uint64_t>(cmd.accelerators);
    const auto hosts = static_cast<std::uint64_t>(cmd.hosts);
    const mlperf::DatasetSize need = mlperf::required_dataset(w, accelerators, hosts, memory);
    const plan::DatasetLayout layout(w);
    std::string out = fmt::format("{}: {} accelerator{} on {} host{} of {} ({} bytes each{})\n", w.name, accelerators,
                                  accelerators == 1 ? "" : "s", hosts, hosts == 1 ? "" : "s",
                                  util::format_bytes(static_cast<double>(memory)), memory,
                                  cmd.host_memory.empty() ? ", this host's" : "");
    if (!mlperf::find_benchmark(w.name))
      out += "  note: not an MLPerf Storage training benchmark; the rule is applied as MLPerf would\n";
    out += fmt::format("  500 steps x batch {} x {} accelerators:  {} samples\n", w.reader.batch_size, accelerators,
                       util::format_count(need.samples_for_steps));
    out += fmt::format("  5 x {} host{} x {} / {} per sample:  {} samples\n", hosts, hosts == 1 ? "" : "s",
                       util::format_bytes(static_cast<double>(memory)), util::format_bytes(need.record_bytes),
                       util::format_count(need.samples_for_memory));
    out += fmt::format("  samples: {}\n", util::format_count(need.samples));
    out += fmt::format("  files: {} ({} sample{} per file)\n", util::format_count(need.files), layout.samples_per_file(),
                       layout.samples_per_file() == 1 ? "" : "s");
    if (need.subfolders > 0)
      out += fmt::format("  subfolders: {} (at most {} files per folder)\n", need.subfolders,
                         util::format_count(mlperf::kFilesPerFolder));
    out += fmt::format("  total: {} ({:.0f} bytes)\n", util::format_bytes(need.bytes), need.bytes);
    out += fmt::format("override: {}\n", mlperf::override_line(need));
    std::string dlio = fmt::format("++workload.dataset.num_files_train={}", need.files);
    if (need.subfolders > 0) dlio += fmt::format(" ++workload.dataset.num_subfolders_train={}", need.subfolders);
    out += fmt::format("  (DLIO and mlpstorage spelling: {})\n", dlio);
    std::printf("%s", out.c_str());
    return 0;
  });
}

}  // namespace trainio::cli
