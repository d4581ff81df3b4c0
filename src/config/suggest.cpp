#include "config/suggest.hpp"

#include <algorithm>
#include <vector>

#include "config/schema.hpp"

namespace trainio::config {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment distance: Levenshtein plus adjacent transpositions.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = static_cast<size_t>(-1);
  const size_t allowed = std::max<size_t>(2, word.size() / 3);
  for (const auto& c : candidates) {
    // The distance is at least the difference in length: skip what cannot be near, so a
    // pasted 20,000-character key is rejected at once instead of after seconds of tables.
    const size_t gap = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
    if (gap > allowed) continue;
    const size_t dist = edit_distance(word, c);
    if (dist < best_distance) {
      best_distance = dist;
      best = c;
    }
  }
  return best_distance <= allowed ? best : std::string();
}

namespace {
std::string leaf_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}
std::string section_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string() : path.substr(0, dot);
}
}  // namespace

std::string suggest_key(const std::string& unknown_path) {
  const std::string section = section_of(unknown_path);
  const std::string leaf = leaf_of(unknown_path);
  std::vector<std::string> same_section, everywhere;
  for (const auto& k : key_catalogue()) {
    everywhere.push_back(k.path);
    if (section_of(k.path) == section) same_section.push_back(leaf_of(k.path));
  }
  for (const auto& s : section_paths()) {
    everywhere.push_back(s);
    if (section_of(s) == section) same_section.push_back(leaf_of(s));
  }
  // 1. A near spelling within the same section.
  if (const auto c = closest(leaf, same_section); !c.empty())
    return section.empty() ? c : section + "." + c;
  // 2. The same key name in another section.
  for (const auto& k : key_catalogue())
    if (leaf_of(k.path) == leaf) return k.path;
  // 3. A near spelling of the whole path.
  return closest(unknown_path, everywhere);
}

}  // namespace trainio::config
