#include <string_view>

#include "config/shipped_workloads.hpp"

namespace trainio::config {

std::string description_of(const ShippedWorkload& w) {
  std::string_view text = w.yaml;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    const auto start = line.find_first_not_of(" \t");
    if (start != std::string_view::npos && line[start] == '#') {
      line.remove_prefix(start + 1);
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      return std::string(line);
    }
    if (start != std::string_view::npos) break;  // content before any comment: no description
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  return {};
}

const ShippedWorkload* find_shipped(const std::string& name) {
  for (const auto& w : shipped_workloads())
    if (name == w.name) return &w;
  return nullptr;
}

}  // namespace trainio::config
