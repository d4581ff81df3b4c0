#pragma once
// The marker file that makes a folder a trainio dataset: <data folder>/.trainio-dataset.json.
// It records the fingerprint of the workload keys that shaped the files and whether generation
// finished. trainio writes into, resumes or deletes only folders that carry it (or empty ones).

#include <string>

#include "config/workload.hpp"
#include "plan/fingerprint.hpp"

#include "util/error.hpp"

namespace trainio::engine {

inline constexpr const char* kMarkerName = ".trainio-dataset.json";

struct DataFolder {
  enum class State { missing, empty, trainio, foreign } state = State::missing;
  bool complete = false;            // generation finished (trainio folders only)
  plan::Fingerprint fingerprint;    // trainio folders only
  std::string damage;               // why the marker cannot be read (e.g. hand-edited); empty if fine
};

DataFolder inspect_data_folder(const std::string& root);

// The error for a data folder that is missing or holds no files, naming `workload` in the fix.
Error no_dataset_error(const std::string& root, const std::string& workload);

// Written atomically (temp + rename).
void write_marker(const std::string& root, const plan::Fingerprint& fp, bool complete);

// The marker's text, and what a marker's text says (an object store keeps it as an object).
std::string marker_text(const plan::Fingerprint& fp, bool complete);
DataFolder marked_folder(const std::string& marker);

// Throws the error that says why the folder does not hold the workload's complete dataset (a
// folder that is not trainio's is read with a warning).
void require_dataset(const config::Workload& w, const std::string& root, const DataFolder& folder);

}  // namespace trainio::engine
