#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "capture/infer.hpp"
#include "capture/score.hpp"
#include "capture/trace_input.hpp"
#include "capture/workload_writer.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "config/load.hpp"
#include "util/error.hpp"

namespace trainio::cli {

namespace {

void say_read(const char* what, const capture::TraceInput& in, const capture::Profile& p) {
  std::fprintf(stderr, "%s: %zu file(s), %.1f MB of %s text, %llu events, in %.2f s (%.0f MB/s)\n", what, in.files.size(),
               static_cast<double>(in.bytes) / 1e6, capture::tracer_name(p.tracer()),
               static_cast<unsigned long long>(p.events()), in.seconds,
               in.seconds > 0 ? static_cast<double>(in.bytes) / 1e6 / in.seconds : 0.0);
}

// Written beside its final name, then renamed: a crash leaves no half workload.
void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw io_error(fmt::format("cannot write {}", tmp), "check the folder exists and is writable");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw io_error(fmt::format("cannot rename {} to {}: {}", tmp, path, ec.message()));
}

int score_command(const CaptureCommand& cmd) {
  std::vector<std::string> real = cmd.score;
  real.insert(real.end(), cmd.traces.begin(), cmd.traces.end());
  if (cmd.replay.empty())
    throw usage_error("--score needs --replay: the replay's results folder (its trace-*.pfw) or an strace of it",
                      "trainio capture --score job.strace --replay results/replay");
  capture::TraceInput real_in, replay_in;
  const capture::Profile a = capture::read_traces(real, &real_in);
  say_read("real job", real_in, a);
  const capture::Profile b = capture::read_traces(cmd.replay, &replay_in);
  say_read("replay", replay_in, b);
  const capture::Score s = capture::score(a, b);
  std::fputs((cmd.json ? capture::score_json(s) : capture::score_text(s)).c_str(), stdout);
  return 0;
}

}  // namespace

int capture_command(const CaptureCommand& cmd) {
  return guarded([&] {
    if (!cmd.score.empty()) return score_command(cmd);
    if (cmd.traces.empty()) throw usage_error("capture needs a trace", "trainio capture job.strace -o workload.yaml");
    if (cmd.output.empty())
      throw usage_error("capture needs -o WORKLOAD.yaml: where to write the workload it infers",
                        "trainio capture job.strace -o workload.yaml");
    capture::TraceInput in;
    const capture::Profile profile = capture::read_traces(cmd.traces, &in);
    say_read("trace", in, profile);
    capture::InferOptions options;
    if (!cmd.name.empty()) options.name = cmd.name;
    options.read_files = cmd.read_files;
    const capture::Inference inference = capture::infer(profile, options);
    if (inference.values.size() <= 1)
      throw usage_error(fmt::format("the trace shows no data files read or written by the job ({} events read)",
                                    profile.events()),
                        "trace the job itself with strace -f (its worker processes too), not only its launcher");
    const std::string yaml = capture::workload_yaml(inference, in.files);
    try {  // what capture writes must load as it is
      (void)config::load_text(yaml, cmd.output, options.name);
    } catch (const Error& e) {
      throw internal_error(fmt::format("the inferred workload does not load: {}", e.what()));
    }
    write_file(cmd.output, yaml);
    std::fprintf(stderr, "wrote %s (dataset %s)\n", cmd.output.c_str(),
                 inference.dataset_path.empty() ? "none" : inference.dataset_path.c_str());
    return 0;
  });
}

}  // namespace trainio::cli
