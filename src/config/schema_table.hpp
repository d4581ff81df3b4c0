#pragma once
// Private to src/config: the key catalogue with the code that reads and prints each key.

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <vector>

#include "config/schema.hpp"
#include "config/workload.hpp"

namespace trainio::config::detail {

struct Entry {
  KeyInfo info;
  // Reads the value into the workload; throws BadValue. Null for keys that are only noted.
  std::function<void(const YAML::Node&, Workload&)> set;
  // The value as YAML flow text; null for keys without a stored value.
  std::function<std::string(const Workload&)> get;
  bool takes_mapping = false;  // the value may be a mapping (e.g. computation_time: {mean: 1})
};

// In DLIO's section order; keys of one section are contiguous.
const std::vector<Entry>& entries();
const Entry* find_entry(const std::string& path);

// Top-level sections and the nested mappings inside them ("dataset.hdf5", "model.parallelism").
bool is_section(const std::string& path);

}  // namespace trainio::config::detail
