#include "engine/dataset_marker.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "storage/fs.hpp"
#include "util/build_info.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace trainio::engine {

namespace {

// True when the folder holds nothing but (possibly nested) empty folders: what a launcher like
// mlpstorage prepares (train/, valid/, test/) before generation is an empty data folder.
bool holds_no_files(const std::string& dir) {
  for (const auto& name : storage::list_dir(dir)) {
    const std::string path = util::join(dir, name);
    std::error_code ec;
    // A link is not followed: it could loop, or lead outside the folder.
    if (std::filesystem::is_symlink(path, ec) || !storage::is_dir(path) || !holds_no_files(path)) return false;
  }
  return true;
}

}  // namespace

Error no_dataset_error(const std::string& root, const std::string& workload) {
  return data_error(fmt::format("there is no dataset in '{}'", root),
                    fmt::format("generate it first ('trainio generate {}' with the same overrides, or "
                                "workflow.generate_data=True), or point dataset.data_folder at the dataset",
                                workload));
}

DataFolder inspect_data_folder(const std::string& root) {
  DataFolder f;
  if (!storage::is_dir(root)) {
    if (storage::file_size(root))
      throw usage_error(fmt::format("the data folder '{}' is a file", root), "set dataset.data_folder to a folder");
    return f;
  }
  const auto marker = storage::read_small_file(util::join(root, kMarkerName));
  if (!marker) {
    f.state = holds_no_files(root) ? DataFolder::State::empty : DataFolder::State::foreign;
    return f;
  }
  f.state = DataFolder::State::trainio;
  try {
    const auto j = nlohmann::ordered_json::parse(*marker);
    f.complete = j.at("state").get<std::string>() == "complete";
    for (const auto& [key, value] : j.at("fingerprint").items()) f.fingerprint.emplace_back(key, value.get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    // An unreadable marker (e.g. hand-edited): still ours, but nothing in it can be trusted.
    f.complete = false;
    f.fingerprint.clear();
    f.damage = e.what();
  }
  return f;
}

void write_marker(const std::string& root, const plan::Fingerprint& fp, bool complete) {
  nlohmann::ordered_json j;
  j["trainio_dataset"] = 1;
  j["state"] = complete ? "complete" : "generating";
  j["updated"] = util::wall_time_iso();
  j["trainio_version"] = util::version();
  nlohmann::ordered_json f = nlohmann::ordered_json::object();
  for (const auto& [key, value] : fp) f[key] = value;
  j["fingerprint"] = f;
  storage::write_file_atomic(util::join(root, kMarkerName), j.dump(2) + "\n");
}

}  // namespace trainio::engine
