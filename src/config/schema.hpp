#pragma once
// The catalogue of workload keys: every DLIO key and every trainio extension, with what it
// accepts, what it does, and whether trainio acts on it. The loader, `trainio config`, the
// "did you mean" suggestions and docs/config.md all come from this one table.

#include <string>
#include <vector>

namespace trainio::config {

struct Workload;

enum class KeyStatus {
  active,       // trainio acts on it
  pending,      // parsed and reported, but the behaviour is not built yet ("accepted, not yet used")
  python_only,  // meaningful only to DLIO's Python stack; no effect here
  dlio_ignored, // found in DLIO's own workload files but ignored by DLIO; no effect here either
};

struct KeyInfo {
  std::string path;      // "reader.batch_size"
  KeyStatus status;
  bool extension;        // a trainio extension, not a DLIO key
  std::string expected;  // "an integer >= 1"
  std::string help;      // one line
  std::string hint;      // for dlio_ignored keys: what the author most likely meant
  std::string default_text;
};

const std::vector<KeyInfo>& key_catalogue();
const KeyInfo* find_key(const std::string& path);

const char* status_label(KeyStatus status);

// Keys trainio does not act on yet whose value in `w` differs from the default: settings the
// user asked for that this build cannot honour.
std::vector<std::string> pending_changes(const Workload& w);

// Sections and nested mappings: "dataset", "dataset.hdf5", "model.parallelism", ...
const std::vector<std::string>& section_paths();

}  // namespace trainio::config
