#include "util/paths.hpp"

#include <algorithm>
#include <filesystem>

namespace trainio::util {

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::string join(std::string_view a, std::string_view b) {
  while (b.size() >= 2 && b.substr(0, 2) == "./") b.remove_prefix(2);
  if (b == ".") b = {};
  if (!b.empty() && b.front() == '/') return std::string(b);
  if (b.starts_with("s3://")) return std::string(b);  // an object store URI is absolute too
  std::string left = strip_trailing_slashes(std::string(a));
  if (b.empty()) return left.empty() ? "." : left;
  if (left.empty() || left == ".") return std::string(b);
  if (left == "/") return std::string("/").append(b);
  return left + "/" + std::string(b);
}

std::string parent_of(const std::string& path) {
  const std::string p = strip_trailing_slashes(path);
  const auto slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

bool is_within(const std::string& path, const std::string& folder) {
  const auto normal = [](const std::string& p) {
    auto n = std::filesystem::absolute(p).lexically_normal();
    return n.has_filename() ? n : n.parent_path();  // "a/b/" names the folder "a/b"
  };
  const auto rel = normal(path).lexically_relative(normal(folder));
  return !rel.empty() && *rel.begin() != "..";
}

std::vector<std::string> without_common_folders(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(strip_trailing_slashes(p));
  if (out.empty()) return out;
  // The longest prefix ending in '/' that every path starts with and none ends at.
  std::size_t common = out.front().size();
  for (const auto& p : out) {
    std::size_t n = 0;
    while (n < common && n < p.size() && p[n] == out.front()[n]) ++n;
    common = n;
  }
  for (const auto& p : out) common = std::min(common, p.size());
  while (common > 0 && out.front()[common - 1] != '/') --common;
  for (auto& p : out) {
    p = p.substr(common);
    if (paths.size() == 1 && p.find('/') != std::string::npos) p = p.substr(p.rfind('/') + 1);
  }
  return out;
}

}  // namespace trainio::util
