#pragma once
// "Did you mean ...?" for misspelled keys and names.

#include <string>
#include <vector>

namespace trainio::config {

// Levenshtein distance (insert, delete, substitute; a swap of neighbours counts as one).
std::size_t edit_distance(const std::string& a, const std::string& b);

// The closest of `candidates` to `word`, or empty when nothing is close enough to be a typo.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

// The known key most likely meant by an unknown key path: a near spelling in the same section,
// or the same key name under another section ("train.batch_size" -> "reader.batch_size").
std::string suggest_key(const std::string& unknown_path);

}  // namespace trainio::config
