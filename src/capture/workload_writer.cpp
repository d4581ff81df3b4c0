#include "capture/workload_writer.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace trainio::capture {

namespace {

// A comment on one line: newlines would end it.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

std::string workload_yaml(const Inference& inference, const std::vector<std::string>& traces) {
  std::string out = "# Written by `trainio capture` from the trace of a real job:\n";
  for (const auto& t : traces) out += "#   " + one_line(std::filesystem::path(t).filename().string()) + "\n";
  out += "# Each value's comment says what in the trace it came from and how sure capture is (high, medium, low).\n";
  if (!inference.unknown.empty()) {
    out += "# Not known from the trace (said, not guessed silently):\n";
    for (const auto& u : inference.unknown) out += "#   - " + one_line(u) + "\n";
  }
  for (const char* section : {"model", "framework", "workflow", "dataset", "reader", "train", "checkpoint"}) {
    const std::string prefix = std::string(section) + ".";
    bool header = false;
    for (const auto& v : inference.values) {
      const std::string comment = fmt::format("  # [{}] {}", v.confidence, one_line(v.evidence));
      if (v.key == section) {
        out += fmt::format("\n{}: {}{}\n", v.key, v.value, comment);
      } else if (v.key.starts_with(prefix)) {
        if (!header) out += fmt::format("\n{}:\n", section), header = true;
        out += fmt::format("  {}: {}{}\n", v.key.substr(prefix.size()), v.value, comment);
      }
    }
  }
  return out;
}

}  // namespace trainio::capture
