#pragma once
// What the config tests ask of a loaded workload's notes and of messages.

#include <string>

#include "config/workload.hpp"
#include "unit/text.hpp"

namespace trainio::test {

// Whether loading the workload left a note on `key`.
inline bool noted(const config::Workload& w, const std::string& key) {
  for (const auto& n : w.notes)
    if (n.key == key) return true;
  return false;
}

}  // namespace trainio::test
