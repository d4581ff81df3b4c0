#include <string>
#include <string_view>

#include "config/shipped_workloads.hpp"

namespace trainio::config {

std::string description_of(const ShippedWorkload& w) {
  // The comment lines before the first key, joined: a description may span lines, and the list
  // must show it whole (cut at a line end, it would stop mid-sentence).
  std::string out;
  std::string_view text = w.yaml;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    const auto start = line.find_first_not_of(" \t");
    if (start != std::string_view::npos) {
      if (line[start] != '#') break;  // the first key ends the description
      line.remove_prefix(start + 1);
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
      if (!line.empty()) out += (out.empty() ? "" : " ") + std::string(line);
    } else if (!out.empty()) {
      break;  // a blank line after the comment block ends it
    }
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  return out;
}

const ShippedWorkload* find_shipped(const std::string& name) {
  for (const auto& w : shipped_workloads())
    if (name == w.name) return &w;
  return nullptr;
}

}  // namespace trainio::config
