// `trainio sweep` and `trainio max-accelerators`: campaigns of runs, each launched as its own job.
#include "campaign/job.hpp"
#include "campaign/max_accelerators.hpp"
#include "campaign/sweep.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"

namespace trainio::cli {

int sweep_command(const SweepCommand& cmd) {
  return guarded([&] {
    campaign::SweepSpec spec;
    spec.words = cmd.words;
    for (const auto& v : cmd.vary) spec.vary.push_back(campaign::parse_vary(v));
    spec.ranks = campaign::parse_ranks(cmd.ranks);
    spec.repeat = cmd.repeat;
    spec.launcher = cmd.launcher.empty() ? campaign::default_launcher() : cmd.launcher;
    campaign::launcher_words(spec.launcher, 1);  // refuses a template without {ranks} before anything runs
    spec.output = cmd.output;
    return campaign::run_sweep(spec);
  });
}

int max_accelerators_command(const MaxAcceleratorsCommand& cmd) {
  return guarded([&] {
    campaign::MaxAcceleratorsSpec spec;
    spec.words = cmd.words;
    spec.ranks_to = cmd.ranks_to;
    spec.storage_bandwidth = cmd.storage_bandwidth.empty() ? 0 : parse_bandwidth(cmd.storage_bandwidth);
    spec.launcher = cmd.launcher.empty() ? campaign::default_launcher() : cmd.launcher;
    campaign::launcher_words(spec.launcher, 1);
    spec.output = cmd.output;
    return campaign::run_max_accelerators(spec);
  });
}

}  // namespace trainio::cli
