#pragma once
// Turning a workload reference and command-line overrides into a validated Workload.

#include <string>
#include <vector>

#include "config/workload.hpp"

namespace trainio::config {

// `spec` is a shipped workload name ("unet3d_h100"), DLIO's "workload=unet3d_h100", or a path to a
// YAML file. `overrides` are "section.key=value" or DLIO/Hydra's "++workload.section.key=value"
// (also "+..." and "~key" to remove a key). Throws Error(config|usage) naming the key, the file
// position or override, and a fix.
Workload load(const std::string& spec, const std::vector<std::string>& overrides = {});

// Loads from YAML text directly; `origin` names the text in messages (tests, shipped workloads).
Workload load_text(const std::string& yaml, const std::string& origin, const std::string& name,
                   const std::vector<std::string>& overrides = {});

// The key an override sets or removes, as "section.key" ("++workload.reader.batch_size=8" ->
// "reader.batch_size"). Throws like `load` for text that is not an override.
std::string override_key(const std::string& text);

// Sorts command-line words into the workload reference and the overrides: words with '=' are
// overrides (except "workload=NAME"), the first other word is the workload.
struct SplitArgs {
  std::string workload;  // empty when none was given
  std::vector<std::string> overrides;
};
SplitArgs split_args(const std::vector<std::string>& words);

}  // namespace trainio::config
