#pragma once
// What to do about a failed storage call, by its errno: the "fix:" line of every storage error.

#include <string>

namespace trainio::storage {

// A one-line fix for `call` failing with `err` on `path`; never empty. A path inside a folder
// named with name_folder() gets a fix that names that folder (a full disk under the results
// folder names --output, not the data folder).
std::string hint_for_errno(const char* call, int err, const std::string& path = {});

// Names `folder` for the fixes of calls on paths inside it, as the user sets it ("the results
// folder (--output or output.folder)", "dataset.data_folder"). `dataset` marks the dataset's
// folder, whose missing files are generated. Set before the threads that make calls start.
void name_folder(const std::string& folder, const std::string& name, bool dataset = false);
void forget_folder_names();

}  // namespace trainio::storage
