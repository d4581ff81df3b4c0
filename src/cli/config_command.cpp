#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "config/dump.hpp"
#include "config/load.hpp"
#include "config/schema.hpp"
#include "config/suggest.hpp"
#include "config/shipped_workloads.hpp"
#include "mlperf/rules.hpp"
#include "mpi/launcher.hpp"
#include "plan/accelerator_demand.hpp"
#include "plan/checkpoint_plan.hpp"
#include "plan/layout.hpp"
#include "plan/run_plan.hpp"
#include "util/error.hpp"
#include "util/host_info.hpp"
#include "util/units.hpp"

namespace trainio::cli {

namespace {

// The sections of the known keys ("dataset", "reader", ...), in catalogue order.
std::vector<std::string> key_sections() {
  std::vector<std::string> sections;
  for (const auto& k : config::key_catalogue()) {
    const std::string section = k.path.substr(0, k.path.find('.'));
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) sections.push_back(section);
  }
  return sections;
}

// Every known key, or those of one section (empty: all).
std::string key_list(bool markdown, const std::string& section = {}) {
  if (!section.empty()) {
    const auto sections = key_sections();
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
      const std::string near = config::closest(section, sections);
      throw usage_error(fmt::format("no section '{}'{}", section, near.empty() ? "" : "; did you mean '" + near + "'?"),
                        fmt::format("give one of: {}", fmt::join(sections, ", ")));
    }
  }
  std::string out;
  if (markdown) out += "| key | default | accepts | status | meaning |\n|---|---|---|---|---|\n";
  for (const auto& k : config::key_catalogue()) {
    if (!section.empty() && k.path.rfind(section + ".", 0) != 0) continue;
    std::string status = config::status_label(k.status);
    if (k.extension) status += ", trainio extension";
    std::string meaning = k.help;
    if (!k.hint.empty()) meaning += fmt::format(" (did you mean {}?)", k.hint);
    if (markdown)
      out += fmt::format("| `{}` | {} | {} | {} | {} |\n", k.path, k.default_text.empty() ? "" : "`" + k.default_text + "`",
                         k.expected, status, meaning);
    else
      out += fmt::format("{}\n    {}\n    accepts {}{}; {}\n", k.path, meaning, k.expected,
                         k.default_text.empty() ? "" : ", default " + k.default_text, status);
  }
  return out;
}

std::string checkpoint_lines(const config::Workload& w, int ranks) {
  std::string out;
  auto line = [&](const std::string& text) { out += "#   " + text + "\n"; };
  try {
    const plan::CheckpointPlan p(w, ranks);
    const auto& par = w.model.parallelism;
    if (p.parameters() > 0)
      line(fmt::format("checkpoint model: {} parameters; tensor x pipeline x data = {} x {} x {}{}, ZeRO {}",
                       util::format_count(p.parameters()), par.tensor, par.pipeline, p.data_parallelism(),
                       p.subset() ? " (this run writes a subset)" : "", par.zero_stage));
    line(fmt::format("checkpoint size: {} ({} bytes): model {}, optimizer {}; written by {} of {} rank{}, at most {} per rank",
                     util::format_bytes(static_cast<double>(p.total_bytes())), p.total_bytes(),
                     util::format_bytes(static_cast<double>(p.model_bytes())),
                     util::format_bytes(static_cast<double>(p.optimizer_bytes())), p.writing_ranks(), ranks,
                     ranks == 1 ? "" : "s", util::format_bytes(static_cast<double>(p.max_rank_bytes()))));
    if (!w.workflow.train) {
      const auto writes = std::max<std::int64_t>(0, w.checkpoint.num_checkpoints_write);
      const auto reads = std::max<std::int64_t>(0, w.checkpoint.num_checkpoints_read);
      line(fmt::format("checkpoint-only run: {} save{}, then {} load{}: {} written, {} read", writes, writes == 1 ? "" : "s",
                       reads, reads == 1 ? "" : "s",
                       util::format_bytes(static_cast<double>(p.total_bytes()) * static_cast<double>(writes)),
                       util::format_bytes(static_cast<double>(p.total_bytes()) * static_cast<double>(reads))));
    }
  } catch (const Error& e) {
    line(fmt::format("checkpoint: {} ({})", e.what(), e.hint()));
  }
  return out;
}

std::string derived(const config::Workload& w, int ranks, double storage_bandwidth) {
  const plan::DatasetLayout layout(w);
  std::string out;
  auto line = [&](const std::string& text) { out += "#   " + text + "\n"; };
  out += fmt::format("# derived for {} rank{}:\n", ranks, ranks == 1 ? "" : "s");
  if (w.workflow.checkpoint) out += checkpoint_lines(w, ranks);
  if (!w.workflow.train && !w.workflow.generate_data) return out;
  const auto train_bytes = layout.total_data_bytes(plan::Split::train);
  const auto train_samples = layout.num_samples(plan::Split::train);
  line(fmt::format("dataset: {} in {}/ ({} files on {})", config::to_string(w.dataset.format), layout.root(),
                   util::format_count(layout.total_files()), w.storage.storage_type == config::StorageType::local_fs ? "local_fs" : "parallel_fs"));
  line(fmt::format("training: {} files x {} samples = {} samples, {} (mean {} per sample)",
                   util::format_count(layout.num_files(plan::Split::train)), layout.samples_per_file(),
                   util::format_count(train_samples), util::format_bytes(static_cast<double>(train_bytes)),
                   util::format_bytes(static_cast<double>(train_bytes) / static_cast<double>(std::max<std::uint64_t>(1, train_samples)))));
  if (layout.num_files(plan::Split::eval) > 0)
    line(fmt::format("evaluation: {} files, {}", util::format_count(layout.num_files(plan::Split::eval)),
                     util::format_bytes(static_cast<double>(layout.total_data_bytes(plan::Split::eval)))));
  const auto r = static_cast<std::uint64_t>(ranks);
  line(fmt::format("generation: each rank writes up to {} files", util::format_count((layout.total_files() + r - 1) / r)));
  if (w.workflow.train) {
    const plan::RunShape shape = plan::shape_run(w, layout, ranks);
    const auto batch = static_cast<std::uint64_t>(w.reader.batch_size);
    line(fmt::format("per rank and epoch: {} steps x batch {} = {} samples (~{} files' worth)",
                     util::format_count(shape.train_steps_per_epoch), batch,
                     util::format_count(shape.train_steps_per_epoch * batch),
                     util::format_count(shape.train_steps_per_epoch * batch / layout.samples_per_file())));
    line(fmt::format("per epoch: {} samples read, {} dropped so every rank runs the same steps",
                     util::format_count(shape.train_steps_per_epoch * batch * r), util::format_count(shape.train_dropped_per_epoch)));
    const double mean_sample = static_cast<double>(train_bytes) / static_cast<double>(std::max<std::uint64_t>(1, train_samples));
    line(fmt::format("bytes per epoch: {} (all ranks)", util::format_bytes(mean_sample * static_cast<double>(shape.train_steps_per_epoch * batch * r))));
    line(fmt::format("run: {} epoch{}, {} steps per rank{}", shape.epochs, shape.epochs == 1 ? "" : "s",
                     util::format_count(shape.total_train_steps),
                     shape.evaluations ? fmt::format(", {} evaluation{} of {} steps", shape.evaluations,
                                                     shape.evaluations == 1 ? "" : "s", shape.eval_steps)
                                       : std::string()));
    if (const std::string warning = plan::few_steps_warning(shape, w); !warning.empty())
      out += "# warning: " + warning + "\n";
    if (const double demand = plan::accelerator_demand(w, layout); demand > 0) {
      line(fmt::format("to keep each accelerator busy: {} per rank ({} for all ranks)", util::format_rate(demand),
                       util::format_rate(demand * static_cast<double>(r))));
      if (storage_bandwidth > 0 && w.metric.au > 0)
        line(fmt::format("predicted on {}: at most {} accelerators meet AU >= {:.0f}% (bandwidth / (AU target x "
                         "demand per accelerator), if reads overlap compute and the storage is the only limit; "
                         "'trainio max-accelerators' measures it)",
                         util::format_rate(storage_bandwidth),
                         plan::predicted_accelerators(storage_bandwidth, demand, w.metric.au), w.metric.au * 100));
    }
  }
  if (const auto* b = mlperf::find_benchmark(w.name); b && b->kind == mlperf::Kind::training && w.workflow.train) {
    // Planned on one host with this host's memory: `trainio datasize` takes other hosts.
    const auto memory = util::host_info().memory_bytes;
    const auto need = mlperf::required_dataset(w, r, 1, memory);
    if (auto shortfall = mlperf::dataset_shortfall(w, need, r, 1, memory))
      out += "# warning: " + *shortfall + " (or see 'trainio datasize " + w.name + "' for other hosts)\n";
  }
  std::string pending;
  for (const auto& key : config::pending_changes(w)) pending += (pending.empty() ? "" : ", ") + key;
  if (!pending.empty()) out += "# set but not acted on by this build (accepted, not yet used): " + pending + "\n";
  return out;
}

}  // namespace

int config_command(const ConfigCommand& cmd) {
  return guarded(
      [&] {
        if (cmd.keys) {
          if (cmd.words.size() > 1)
            throw usage_error("--keys takes at most one section", "e.g. 'trainio config --keys reader'");
          std::printf("%s", key_list(false, cmd.words.empty() ? std::string() : cmd.words.front()).c_str());
          return 0;
        }
        const auto split = config::split_args(cmd.words);
        const config::Workload w = config::load(split.workload, split.overrides);
        const int ranks = cmd.ranks > 0 ? cmd.ranks : std::max(1, mpi::launcher_world_size());
        std::string out = fmt::format("# workload '{}' from {}\n", w.name, w.source);
        for (const auto& o : w.overrides) out += "# override: " + o + "\n";
        for (const auto& n : w.notes) out += "# note: " + n.message + "\n";
        out += config::to_yaml(w, true);
        out += derived(w, ranks, cmd.storage_bandwidth.empty() ? 0 : parse_bandwidth(cmd.storage_bandwidth));
        std::printf("%s", out.c_str());
        return 0;
      });
}

int workloads_command() {
  // One line per workload, its whole description (never cut mid-sentence), so scripts can read it.
  for (const auto& w : config::shipped_workloads())
    std::printf("%-24s %s\n", w.name, config::description_of(w).c_str());
  return 0;
}

}  // namespace trainio::cli
