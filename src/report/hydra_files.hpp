#pragma once
// The three files Hydra writes for every DLIO run, in <results>/<output_subdir> (default .hydra):
//   config.yaml     the run's configuration under a top-level `workload:` key (trainio writes the
//                   resolved workload: every key, defaults included)
//   overrides.yaml  the command line's overrides as a list: workload=NAME, then ++workload.k=v ...
//   hydra.yaml      Hydra's own settings of the run (results folder, overrides, job name)
// mlpstorage's `reports reportgen` and DLIO's post-processor read the first two.

#include <string>

#include "config/workload.hpp"

namespace trainio::report {

struct HydraRun {
  std::string run_dir;     // the results folder as given
  std::string output_dir;  // the same, absolute
  std::string cwd;
  std::string subdir;      // where the files go, inside run_dir
  std::string job_name;    // the program's name: dlio_benchmark or trainio
};

std::string hydra_config_yaml(const config::Workload& w);
std::string hydra_overrides_yaml(const config::Workload& w);
std::string hydra_yaml(const config::Workload& w, const HydraRun& run);

// The overrides as Hydra spells them: "reader.batch_size=8" -> "++workload.reader.batch_size=8",
// "~dataset.x" -> "~workload.dataset.x"; overrides already under workload. are kept as given.
std::string hydra_override(const std::string& text);

// Writes the three files (each whole, then renamed). Nothing when run.subdir is empty.
void write_hydra_files(const config::Workload& w, const HydraRun& run);

}  // namespace trainio::report
