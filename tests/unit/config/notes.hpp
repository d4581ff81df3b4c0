#pragma once
// What the config tests ask of a loaded workload's notes and of messages.

#include <string>

#include "config/workload.hpp"

namespace trainio::test {

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Whether loading the workload left a note on `key`.
inline bool noted(const config::Workload& w, const std::string& key) {
  for (const auto& n : w.notes)
    if (n.key == key) return true;
  return false;
}

}  // namespace trainio::test
