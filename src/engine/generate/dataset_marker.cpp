#include "engine/generate/dataset_marker.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "storage/fs.hpp"
#include "util/build_info.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace trainio::engine {

namespace {

// True when the folder holds nothing but (possibly nested) empty folders: what a launcher like
// mlpstorage prepares (train/, valid/, test/) before generation is an empty data folder.
// Stops at the first file: a DLIO dataset's folder may hold millions.
bool holds_no_files(const std::string& dir) {
  return storage::for_each_entry(dir, [&](const std::string& name) {
    const std::string path = util::join(dir, name);
    std::error_code ec;
    // A link is not followed: it could loop, or lead outside the folder.
    return !std::filesystem::is_symlink(path, ec) && storage::is_dir(path) && holds_no_files(path);
  });
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
  return marked_folder(*marker);
}

DataFolder marked_folder(const std::string& marker) {
  DataFolder f;
  f.state = DataFolder::State::trainio;
  try {
    const auto j = nlohmann::ordered_json::parse(marker);
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
  storage::write_file_atomic(util::join(root, kMarkerName), marker_text(fp, complete));
}

std::string marker_text(const plan::Fingerprint& fp, bool complete) {
  nlohmann::ordered_json j;
  j["trainio_dataset"] = 1;
  j["state"] = complete ? "complete" : "generating";
  j["updated"] = util::wall_time_iso();
  j["trainio_version"] = util::version();
  nlohmann::ordered_json f = nlohmann::ordered_json::object();
  for (const auto& [key, value] : fp) f[key] = value;
  j["fingerprint"] = f;
  return j.dump(2) + "\n";
}

void require_dataset(const config::Workload& w, const std::string& root, const DataFolder& folder) {
  switch (folder.state) {
    case DataFolder::State::missing:
    case DataFolder::State::empty:
      throw no_dataset_error(root, w.name);
    case DataFolder::State::foreign:
      spdlog::warn("'{}' has no {}: reading the files the workload names without checking how they were made", root,
                   kMarkerName);
      return;
    case DataFolder::State::trainio:
      break;
  }
  if (!folder.damage.empty())
    throw data_error(fmt::format("the dataset marker '{}' is damaged ({}): nothing says how these files were made",
                                 util::join(root, kMarkerName), folder.damage),
                     fmt::format("regenerate the dataset ('trainio generate {}' with the same overrides, or "
                                 "workflow.generate_data=True): it replaces the files", w.name));
  if (!folder.complete)
    throw data_error(fmt::format("the dataset in '{}' is incomplete: its generation did not finish", root),
                     "run the generation again; it keeps the complete files and writes the rest");
  if (const auto diff = plan::first_difference(folder.fingerprint, plan::dataset_fingerprint(w)))
    throw config_error(fmt::format("the dataset in '{}' was generated with {}={}, but the workload has {}={}", root,
                                   diff->key, diff->have, diff->key, diff->want),
                       "regenerate it for this workload ('trainio generate' or workflow.generate_data=True), "
                       "or point dataset.data_folder at a matching dataset");
}

}  // namespace trainio::engine
