#include "report/config_json.hpp"

#include <yaml-cpp/yaml.h>

#include "config/dump.hpp"

namespace trainio::report {

using json = nlohmann::ordered_json;

namespace {

json yaml_to_json(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return nullptr;
  if (n.IsSequence()) {
    json a = json::array();
    for (const auto& item : n) a.push_back(yaml_to_json(item));
    return a;
  }
  if (n.IsMap()) {
    json o = json::object();
    for (const auto& item : n) o[item.first.Scalar()] = yaml_to_json(item.second);
    return o;
  }
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted in the YAML: always text
  if (s == "true") return true;
  if (s == "false") return false;
  try {
    size_t used = 0;
    const long long i = std::stoll(s, &used);
    if (used == s.size()) return i;
    const double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (...) {
  }
  return s;
}

}  // namespace

nlohmann::ordered_json workload_config_json(const config::Workload& w) {
  json root = json::object();
  for (const auto& [path, value] : config::resolved_values(w)) {
    json* node = &root;
    size_t start = 0;
    while (true) {
      const auto dot = path.find('.', start);
      const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (dot == std::string::npos) {
        (*node)[part] = yaml_to_json(YAML::Load(value));
        break;
      }
      node = &(*node)[part];
      start = dot + 1;
    }
  }
  return root;
}

}  // namespace trainio::report
