#include "report/hydra_files.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <vector>

#include "config/dump.hpp"
#include "storage/fs.hpp"
#include "util/build_info.hpp"
#include "util/paths.hpp"

namespace trainio::report {

namespace {

std::vector<std::string> task_overrides(const config::Workload& w) {
  std::vector<std::string> out{"workload=" + w.name};
  for (const auto& o : w.overrides) out.push_back(hydra_override(o));
  return out;
}

std::string header() { return std::string("# written by trainio ") + util::version() + ", as Hydra writes it for DLIO\n"; }

}  // namespace

std::string hydra_override(const std::string& text) {
  std::size_t sigils = 0;
  while (sigils < text.size() && (text[sigils] == '+' || text[sigils] == '~')) ++sigils;
  const std::string bare = text.substr(sigils);
  if (bare.rfind("workload.", 0) == 0) return text;
  const std::string prefix = sigils ? text.substr(0, sigils) : "++";
  return prefix + "workload." + bare;
}

std::string hydra_config_yaml(const config::Workload& w) {
  YAML::Node workload = YAML::Load(config::to_yaml(w, false));
  // DLIO's post-processor reads the sample size under its old name, dataset.record_length (DLIO
  // 1.0's key; trainio loads it back as the same value).
  workload["dataset"]["record_length"] = w.dataset.record_length_bytes;
  YAML::Node root;
  root["workload"] = workload;
  YAML::Emitter out;
  out << root;
  return header() + out.c_str() + "\n";
}

std::string hydra_overrides_yaml(const config::Workload& w) {
  YAML::Emitter out;
  out << YAML::BeginSeq;
  for (const auto& o : task_overrides(w)) out << o;
  out << YAML::EndSeq;
  return header() + out.c_str() + "\n";
}

std::string hydra_yaml(const config::Workload& w, const HydraRun& run) {
  const std::vector<std::string> task = task_overrides(w);
  std::vector<std::string> sorted = task;
  std::sort(sorted.begin(), sorted.end());
  std::string dirname;
  for (const auto& o : sorted) dirname += (dirname.empty() ? "" : ",") + o;

  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "hydra" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "run" << YAML::Value << YAML::BeginMap << YAML::Key << "dir" << YAML::Value << run.run_dir
      << YAML::EndMap;
  out << YAML::Key << "output_subdir" << YAML::Value << run.subdir;
  out << YAML::Key << "mode" << YAML::Value << "RUN";
  out << YAML::Key << "overrides" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "hydra" << YAML::Value << YAML::BeginSeq << "hydra.run.dir=" + run.run_dir
      << "hydra.output_subdir=" + run.subdir << "hydra.mode=RUN" << YAML::EndSeq;
  out << YAML::Key << "task" << YAML::Value << YAML::BeginSeq;
  for (const auto& o : task) out << o;
  out << YAML::EndSeq << YAML::EndMap;
  out << YAML::Key << "job" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << run.job_name;
  out << YAML::Key << "override_dirname" << YAML::Value << dirname;
  out << YAML::Key << "config_name" << YAML::Value << "config" << YAML::EndMap;
  out << YAML::Key << "runtime" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "cwd" << YAML::Value << run.cwd;
  out << YAML::Key << "output_dir" << YAML::Value << run.output_dir;
  out << YAML::Key << "choices" << YAML::Value << YAML::BeginMap << YAML::Key << "workload" << YAML::Value << w.name
      << YAML::EndMap;
  out << YAML::EndMap;
  out << YAML::EndMap << YAML::EndMap;
  return header() + out.c_str() + "\n";
}

void write_hydra_files(const config::Workload& w, const HydraRun& run) {
  if (run.subdir.empty()) return;
  const std::string dir = util::join(run.run_dir, run.subdir);
  storage::make_dirs(dir);
  storage::write_file_atomic(util::join(dir, "config.yaml"), hydra_config_yaml(w));
  storage::write_file_atomic(util::join(dir, "overrides.yaml"), hydra_overrides_yaml(w));
  storage::write_file_atomic(util::join(dir, "hydra.yaml"), hydra_yaml(w, run));
}

}  // namespace trainio::report
