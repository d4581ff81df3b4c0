#include "config/load.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

#include "config/codecs.hpp"
#include "config/schema_table.hpp"
#include "config/shipped_workloads.hpp"
#include "config/suggest.hpp"
#include "config/validate.hpp"
#include "config/workload_file.hpp"
#include "util/error.hpp"
#include "util/redact.hpp"

namespace trainio::config {

namespace {

using detail::BadValue;
using detail::Entry;

// One key=value found in the file or the overrides, before it is applied.
struct Leaf {
  std::string path;
  YAML::Node value;
  std::string where;  // "workloads/x.yaml:12:5" or "override 'a.b=c'"
};

class Loader {
 public:
  Loader(std::string origin, std::map<std::string, std::string> override_of)
      : origin_(std::move(origin)), override_of_(std::move(override_of)) {}

  void collect(const YAML::Node& map, const std::string& prefix) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& item : map) {
      const YAML::Node& k = item.first;
      const YAML::Node& v = item.second;
      std::string name = k.IsScalar() ? k.Scalar() : detail::flow_text(k);
      if (const auto dup = seen.find(name); dup != seen.end()) {
        throw config_error(
            fmt::format("{}: key '{}' appears twice (first at line {})", where(join(prefix, name), k),
                        join(prefix, name), dup->second.line + 1),
            "remove one of them (DLIO refuses duplicate keys too)");
      }
      seen.emplace(name, k.Mark());
      if (prefix.empty() && name == "data_reader") {
        notes_.push_back({"data_reader", "'data_reader' is DLIO's old name of the 'reader' section"});
        name = "reader";
      }
      const std::string path = join(prefix, name);
      visit(path, k, v);
    }
  }

  // DLIO 1.0's names (MLPerf Storage v1.0's files), which DLIO 2.0 ignores: read as DLIO 1.0
  // reads them where the 2.0 key is absent, with a note; both given and different is an error.
  void read_old_names(YAML::Node& root) {
    struct OldName {
      const char *section, *key, *new_section, *new_key;
    };
    static constexpr OldName kOldNames[] = {
        {"dataset", "record_length", "dataset", "record_length_bytes"},
        {"dataset", "record_length_stdev", "dataset", "record_length_bytes_stdev"},
        {"dataset", "record_length_resize", "dataset", "record_length_bytes_resize"},
        {"checkpoint", "model_size", "model", "model_size_bytes"},
    };
    for (const auto& o : kOldNames) {
      const YAML::Node& const_root = root;  // lookups that must not add keys
      const YAML::Node section = const_root[o.section];
      // (A missing key gives an invalid node: ask IsDefined before anything else.)
      if (!section.IsDefined() || !section.IsMap() || !section[o.key].IsDefined()) continue;
      const YAML::Node value = section[o.key];
      const std::string old_path = join(o.section, o.key), new_path = join(o.new_section, o.new_key);
      std::string at;  // (assigning a YAML::Node would overwrite what it refers to: keep the text)
      for (const auto& item : section)
        if (item.first.Scalar() == o.key) at = where(old_path, item.first);
      if (const YAML::Node model = const_root[o.new_section]; model.IsDefined() && model.IsScalar() &&
                                                                std::string(o.new_section) == "model") {
        YAML::Node expanded(YAML::NodeType::Map);  // `model: unet3d` is the model's name
        expanded["name"] = model;
        root[o.new_section] = expanded;
      }
      const YAML::Node target_section = const_root[o.new_section];
      const YAML::Node current =
          target_section.IsDefined() && target_section.IsMap() ? target_section[o.new_key] : YAML::Node();
      if (current.IsDefined() && !current.IsNull()) {
        if (detail::flow_text(current) != detail::flow_text(value))
          throw config_error(fmt::format("{}: {} is {} but {} ({}) is {}: two values for one setting", at, old_path,
                                         detail::flow_text(value), new_path, where(new_path, current),
                                         detail::flow_text(current)),
                             fmt::format("remove {} (DLIO 1.0's name of {}), or give both the same value", old_path,
                                         new_path));
        notes_.push_back({old_path, fmt::format("{} ({}): DLIO 1.0's name of {}, which has the same value", old_path,
                                                at, new_path)});
      } else {
        root[o.new_section][o.new_key] = value;
        if (const auto it = override_of_.find(old_path); it != override_of_.end()) override_of_[new_path] = it->second;
        notes_.push_back({old_path, fmt::format("{} ({}): DLIO 1.0's name of {}; read as {} = {}, as DLIO 1.0 does "
                                                "(DLIO 2.0 would ignore it)",
                                                old_path, at, new_path, new_path, detail::flow_text(value))});
      }
      root[o.section].remove(o.key);
    }
  }

  const std::vector<Leaf>& leaves() const { return leaves_; }
  std::vector<ConfigNote>& notes() { return notes_; }

  std::string where(const std::string& path, const YAML::Node& node) const {
    if (const auto it = override_of_.find(path); it != override_of_.end())
      return fmt::format("override '{}'", util::redact(it->second));
    const YAML::Mark m = node.Mark();
    if (m.line < 0) return origin_;
    return fmt::format("{}:{}:{}", origin_, m.line + 1, m.column + 1);
  }

  // Where an unknown key was given, its value left out ("key=..."): a misspelled key may hold a
  // secret that no rule can recognise ("pasword").
  std::string where_unknown(const std::string& path, const YAML::Node& node) const {
    const auto it = override_of_.find(path);
    if (it == override_of_.end()) return where(path, node);
    const std::string& text = it->second;
    return fmt::format("override '{}{}'", text.substr(0, text.find('=')), text.find('=') == std::string::npos ? "" : "=...");
  }

 private:
  static std::string join(const std::string& prefix, const std::string& name) {
    return prefix.empty() ? name : prefix + "." + name;
  }

  void visit(const std::string& path, const YAML::Node& key, const YAML::Node& value) {
    const Entry* entry = detail::find_entry(path);
    if (path == "model" && value.IsScalar()) {
      // DLIO's older files write `model: unet3d`; it means the model's name.
      leaves_.push_back({"model.name", value, where(path, value)});
      return;
    }
    if (entry && (entry->takes_mapping || !value.IsMap())) {
      leaves_.push_back({path, value, where(path, value)});
      return;
    }
    if (detail::is_section(path)) {
      if (value.IsNull()) return;
      if (!value.IsMap())
        throw config_error(fmt::format("{}: '{}' is a section and needs keys under it, got '{}'",
                                       where(path, value), path, detail::flow_text(value)),
                           fmt::format("write it as '{}:' followed by indented 'key: value' lines", path));
      collect(value, path);
      return;
    }
    if (entry) {  // a mapping given to a plain key
      throw config_error(fmt::format("{}: {}: expected {}, got a mapping", where(path, value), path,
                                     entry->info.expected),
                         fmt::format("see 'trainio config --keys' for what {} accepts", path));
    }
    const std::string suggestion = suggest_key(path);
    throw config_error(fmt::format("{}: unknown key '{}'", where_unknown(path, key), path),
                       suggestion.empty()
                           ? "remove it, or see 'trainio config --keys' for every key trainio knows"
                           : fmt::format("did you mean '{}'?", suggestion));
  }

  std::string origin_;
  std::map<std::string, std::string> override_of_;
  std::vector<Leaf> leaves_;
  std::vector<ConfigNote> notes_;
};

// ---- overrides ----

struct Override {
  std::vector<std::string> path;
  std::string text;   // as given
  std::string value;  // right of '='
  bool remove = false;
};

std::vector<std::string> split_path(const std::string& key) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(key);
  while (std::getline(in, part, '.')) parts.push_back(part);
  return parts;
}

Override parse_override(const std::string& text) {
  Override o;
  o.text = text;
  std::string s = text;
  if (s.rfind("~", 0) == 0) {
    o.remove = true;
    s.erase(0, 1);
  }
  while (!s.empty() && s[0] == '+') s.erase(0, 1);
  const auto eq = s.find('=');
  std::string key = eq == std::string::npos ? s : s.substr(0, eq);
  if (eq == std::string::npos && !o.remove)
    throw usage_error(fmt::format("'{}' is not an override", util::redact(text)),
                      "write overrides as section.key=value, e.g. reader.batch_size=8");
  if (eq != std::string::npos) o.value = s.substr(eq + 1);
  // `key=` with nothing after it would silently put the default back: say so instead.
  if (eq != std::string::npos && o.value.empty() && !o.remove)
    throw usage_error(fmt::format("override '{}' has no value", text),
                      fmt::format("give a value ({}<value>), or drop the key with ~{}", s.substr(0, eq + 1),
                                  s.substr(0, eq)));
  if (key.rfind("workload.", 0) == 0) key.erase(0, 9);
  o.path = split_path(key);
  const bool bad = o.path.empty() || std::any_of(o.path.begin(), o.path.end(), [](const std::string& p) {
                     return p.empty() || p.find_first_of(" \t[]{}:,") != std::string::npos;
                   });
  if (bad)
    throw usage_error(fmt::format("override '{}' does not name a key", util::redact(text)),
                      "write overrides as section.key=value, e.g. reader.batch_size=8");
  return o;
}

YAML::Node parse_override_value(const Override& o) {
  if (o.value.empty()) return YAML::Node(YAML::NodeType::Null);
  try {
    return YAML::Load(o.value);
  } catch (const YAML::Exception& e) {
    throw usage_error(fmt::format("override '{}': cannot read the value: {}", util::redact(o.text), e.msg),
                      "lists are written [a,b], mappings {key: value}; quote text with special characters");
  }
}

void apply_override(YAML::Node& root, const Override& o) {
  YAML::Node cur;
  cur.reset(root);
  for (size_t i = 0; i + 1 < o.path.size(); ++i) {
    YAML::Node next = cur[o.path[i]];
    if (next.IsDefined() && next.IsScalar() && i == 0 && o.path[i] == "model") {
      // `model: name` in the file and an override below model: expand the short form.
      YAML::Node expanded(YAML::NodeType::Map);
      expanded["name"] = next.Scalar();
      cur[o.path[i]] = expanded;
    } else if (!next.IsDefined() || !next.IsMap()) {
      if (o.remove) return;
      cur[o.path[i]] = YAML::Node(YAML::NodeType::Map);
    }
    YAML::Node child = cur[o.path[i]];
    cur.reset(child);
  }
  if (o.remove) cur.remove(o.path.back());
  else cur[o.path.back()] = parse_override_value(o);
}

std::string stem_of(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  const auto dot = name.rfind('.');
  if (dot != std::string::npos && dot > 0) name.erase(dot);
  return name;
}

Workload build(const YAML::Node& root_in, const std::string& origin, const std::string& name,
               const std::vector<std::string>& overrides) {
  YAML::Node root = root_in.IsNull() || !root_in.IsDefined() ? YAML::Node(YAML::NodeType::Map) : root_in;
  if (!root.IsMap())
    throw config_error(fmt::format("{}: a workload file is a mapping of sections (model:, dataset:, ...)", origin),
                       "start the file with sections such as 'dataset:' and 'reader:', keys indented below them");

  std::map<std::string, std::string> override_of;
  for (const auto& text : overrides) {
    const Override o = parse_override(text);
    apply_override(root, o);
    std::string joined;
    for (const auto& p : o.path) joined += (joined.empty() ? "" : ".") + p;
    override_of[joined] = text;
  }

  Loader loader(origin, override_of);
  loader.read_old_names(root);
  loader.collect(root, "");

  // Apply in catalogue order, so that e.g. computation_time_stdev refines computation_time
  // wherever it stands in the file (as DLIO does). Sort indices: assigning a YAML::Node would
  // overwrite the node it refers to instead of rebinding it.
  const auto& leaves = loader.leaves();
  const auto& all = detail::entries();
  std::vector<size_t> order(leaves.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto rank = [&](size_t i) { return detail::find_entry(leaves[i].path) - all.data(); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });

  Workload w;
  w.name = name;
  w.source = origin;
  for (const auto& o : overrides) w.overrides.push_back(util::redact(o));  // kept for display only
  w.notes = loader.notes();
  for (const size_t i : order) {
    const Leaf& leaf = leaves[i];
    const Entry& e = *detail::find_entry(leaf.path);
    w.set_keys.push_back(leaf.path);
    if (!e.set) {
      std::string msg = fmt::format("{} ({}): {}", leaf.path, leaf.where, e.info.help);
      if (!e.info.hint.empty()) msg += fmt::format("; did you mean '{}'?", e.info.hint);
      w.notes.push_back({leaf.path, msg});
      continue;
    }
    if (leaf.value.IsNull() && !e.takes_mapping) continue;  // `key:` with no value keeps the default
    try {
      e.set(leaf.value, w);
    } catch (const BadValue& bad) {
      throw config_error(fmt::format("{}: {}: expected {}, got '{}'", leaf.where, leaf.path, bad.expected,
                                     util::redact_value(leaf.path, detail::flow_text(leaf.value))),
                         fmt::format("see 'trainio config --keys' for what {} accepts", leaf.path));
    }
    if (e.info.status == KeyStatus::python_only)
      w.notes.push_back({leaf.path, fmt::format("{} ({}): {}", leaf.path, leaf.where, e.info.help)});
  }
  validate(w);
  return w;
}

}  // namespace

Workload load_text(const std::string& yaml, const std::string& origin, const std::string& name,
                   const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::ParserException& e) {
    throw config_error(fmt::format("{}:{}:{}: not valid YAML: {}", origin, e.mark.line + 1, e.mark.column + 1, e.msg),
                       "check the indentation and the ':' after each key");
  }
  return build(root, origin, name, overrides);
}

Workload load(const std::string& spec_in, const std::vector<std::string>& overrides) {
  std::string spec = spec_in.empty() ? "default" : spec_in;
  if (spec.rfind("workload=", 0) == 0) spec.erase(0, 9);
  if (const ShippedWorkload* shipped = find_shipped(spec))
    return load_text(shipped->yaml, "workloads/" + spec + ".yaml", spec, overrides);
  for (const std::string& candidate : {spec, spec + ".yaml"}) {
    if (auto text = read_workload_file(candidate)) return load_text(*text, candidate, stem_of(candidate), overrides);
  }
  std::vector<std::string> names;
  for (const auto& w : shipped_workloads()) names.push_back(w.name);
  const std::string near = closest(spec, names);
  throw usage_error(fmt::format("no shipped workload or file named '{}'", spec),
                    near.empty() ? "run 'trainio workloads' to list shipped workloads, or give a path to a YAML file"
                                 : fmt::format("did you mean '{}'? ('trainio workloads' lists them all)", near));
}

std::string override_key(const std::string& text) {
  std::string key;
  for (const auto& part : parse_override(text).path) key += (key.empty() ? "" : ".") + part;
  return key;
}

SplitArgs split_args(const std::vector<std::string>& words) {
  SplitArgs out;
  for (const auto& word : words) {
    if (word.rfind("workload=", 0) == 0 || word.find('=') == std::string::npos) {
      if (word.rfind("~", 0) == 0) {
        out.overrides.push_back(word);
        continue;
      }
      if (!out.workload.empty())
        throw usage_error(fmt::format("two workloads given: '{}' and '{}'", out.workload, word),
                          "give one workload, then overrides as section.key=value");
      out.workload = word;
    } else {
      out.overrides.push_back(word);
    }
  }
  return out;
}

}  // namespace trainio::config
