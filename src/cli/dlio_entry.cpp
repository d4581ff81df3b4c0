#include "cli/dlio_entry.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace trainio::cli {

namespace {

constexpr const char* kName = "dlio_benchmark";

constexpr const char* kHelp = R"(dlio_benchmark (trainio) - DLIO's command line, run by trainio

Usage: [mpirun -n N] dlio_benchmark [workload=NAME] [++workload.section.key=value ...]
                                    [++hydra.run.dir=DIR] [++hydra.output_subdir=SUB] [--config-dir DIR]

  workload=NAME           DIR/workload/NAME.yaml under --config-dir, else trainio's shipped workload NAME
  ++workload.a.b=value    override a workload key (also workload.a.b=value, +workload..., ~workload.a.b)
  ++hydra.run.dir=DIR     the results folder
  ++hydra.output_subdir=S where Hydra's config.yaml, overrides.yaml and hydra.yaml go (default .hydra)
  --config-dir DIR        folder of workload/<name>.yaml files (also --config-dir=DIR, -cd DIR)

Other hydra.* settings are accepted and have no effect. Everything else trainio does is under its own
name: run 'trainio --help'.
)";

bool file_exists(const std::string& path) {
  std::ifstream in(path);
  return static_cast<bool>(in);
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// "++hydra.run.dir=x" -> "hydra.run.dir=x"; "~workload.a" -> "workload.a".
std::string without_prefix(const std::string& word) {
  std::size_t i = 0;
  while (i < word.size() && (word[i] == '+' || word[i] == '~')) ++i;
  return word.substr(i);
}

[[noreturn]] void unsupported(const std::string& word, const std::string& what) {
  throw usage_error(fmt::format("{}: '{}' {}", kName, word, what),
                    "run trainio under its own name for more than DLIO's single runs ('trainio --help')");
}

// Hydra's files stay inside the results folder: a relative path without '..' ("null": none).
std::string checked_subdir(const std::string& word, const std::string& value) {
  if (value == "null") return {};
  const std::string padded = "/" + value + "/";
  if (value.empty() || value[0] == '/' || padded.find("/../") != std::string::npos)
    throw usage_error(fmt::format("{}: '{}' would put Hydra's files outside the results folder", kName, word),
                      "give hydra.output_subdir as a folder name inside hydra.run.dir, e.g. dlio_config (or null)");
  return value;
}

}  // namespace

bool invoked_as_dlio(const char* argv0) {
  if (!argv0) return false;
  const std::string path = argv0;
  return path.substr(path.find_last_of('/') + 1) == kName;
}

DlioArgs translate_dlio_args(const std::vector<std::string>& args,
                             const std::function<bool(const std::string&)>& exists) {
  DlioArgs out;
  std::string workload, config_dir;
  std::vector<std::string> overrides;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--help" || word == "-h") {
      out.help = true;
      continue;
    }
    if (word == "--config-dir" || word == "-cd" || starts_with(word, "--config-dir=")) {
      if (word.find('=') != std::string::npos) config_dir = word.substr(word.find('=') + 1);
      else if (i + 1 < args.size()) config_dir = args[++i];
      if (config_dir.empty())
        throw usage_error(fmt::format("{}: --config-dir needs a folder", kName),
                          "write --config-dir DIR or --config-dir=DIR (DIR holds workload/<name>.yaml)");
      continue;
    }
    if (starts_with(word, "-") && !starts_with(word, "--config-dir"))
      unsupported(word, "is a Hydra option trainio does not offer (it runs one job: no multirun, --cfg, --info)");
    const std::string bare = without_prefix(word);
    const auto eq = bare.find('=');
    if (starts_with(bare, "hydra.") || starts_with(bare, "hydra/")) {
      if (eq == std::string::npos) unsupported(word, "sets no value (write ++hydra.key=value)");
      const std::string key = bare.substr(0, eq), value = bare.substr(eq + 1);
      if (key == "hydra.run.dir") out.output = value;
      else if (key == "hydra.output_subdir") out.hydra_subdir = checked_subdir(word, value);
      else out.notes.push_back(fmt::format("{} is a Hydra setting without effect in trainio ('{}')", key, word));
      continue;
    }
    if (starts_with(word, "workload=")) {
      if (!workload.empty())
        throw usage_error(fmt::format("{}: two workloads given: 'workload={}' and '{}'", kName, workload, word),
                          "give workload=NAME once");
      workload = word.substr(9);
      if (workload.empty())
        throw usage_error(fmt::format("{}: 'workload=' names no workload", kName), "write workload=NAME, e.g. workload=unet3d_h100");
      continue;
    }
    if (starts_with(bare, "workload.")) {
      overrides.push_back(word);
      continue;
    }
    if (eq != std::string::npos)
      throw usage_error(fmt::format("{}: '{}' is not a key of DLIO's configuration", kName, word),
                        fmt::format("workload keys are overridden as ++workload.{}", bare));
    unsupported(word, "is not an argument of DLIO's (give workload=NAME and ++workload.key=value overrides)");
  }
  const std::string name = workload.empty() ? "default" : workload;
  std::string spec = "workload=" + name;
  if (!config_dir.empty()) {
    const std::string candidate = util::join(util::strip_trailing_slashes(config_dir), "workload/" + name + ".yaml");
    if (exists(candidate)) spec = candidate;
  }
  out.words.push_back(spec);
  out.words.insert(out.words.end(), overrides.begin(), overrides.end());
  return out;
}

int dlio_main(int argc, char** argv) {
  DlioArgs args;
  const int code = guarded([&] {
    args = translate_dlio_args(std::vector<std::string>(argv + 1, argv + argc), file_exists);
    return 0;
  });
  if (code != 0) return code;
  if (args.help) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  RunCommand cmd;
  cmd.words = args.words;
  cmd.output = args.output;
  cmd.hydra_subdir = args.hydra_subdir;
  cmd.notes = args.notes;
  return run_command(cmd, argc, argv);
}

}  // namespace trainio::cli
