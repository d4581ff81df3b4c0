#pragma once
// From a trace's profile to a workload: each value with the evidence it came from and how sure
// capture is of it, and a list of what the trace cannot tell (docs/capture.md).

#include <optional>
#include <string>
#include <vector>

#include "capture/profile.hpp"

namespace trainio::capture {

struct Value {
  std::string key;         // "section.key", as the workload file spells it
  std::string value;       // its YAML text
  std::string evidence;    // what in the trace (or the files) it came from
  std::string confidence;  // high, medium or low
};

struct Inference {
  std::vector<Value> values;
  std::vector<std::string> unknown;  // what the trace cannot tell, said in the file's header
  std::string dataset_path;          // the traced dataset folder ("" when the job read none)
  void set(std::string key, std::string value, std::string evidence, std::string confidence);
  const Value* find(const std::string& key) const;
};

struct InferOptions {
  std::string name = "captured";
  std::string data_folder = "data/captured";             // where the replay generates its dataset
  std::string checkpoint_folder = "checkpoints/captured";
  bool read_files = true;  // read the first bytes of dataset files still at their traced paths
};

// The folder holding the job's dataset: of the folders read and never written, the one read most
// (bytes); nullopt when the job read no data files.
std::optional<std::uint32_t> dataset_dir(const Profile& p);
// Files the job wrote data to (checkpoints, outputs), outside the dataset folder.
std::vector<std::uint32_t> written_files(const Profile& p);

// The job's batches, from when each reading process opens dataset files: the runs of opens
// between pauses (a pause is a gap over 3x the process's median gap between opens).
struct Cadence {
  int batch = 0;              // the commonest run length; 0 when not visible
  std::size_t runs = 0;       // runs seen
};
Cadence cadence(const Profile& p, std::uint32_t dir);

// Processes reading `dir` at the same time, at most.
int concurrent_readers(const Profile& p, std::uint32_t dir);

Inference infer(const Profile& p, const InferOptions& options);

}  // namespace trainio::capture
