#pragma once
// Path text helpers (no file-system access).

#include <string>
#include <string_view>
#include <vector>

namespace trainio::util {

// Joins path parts with single slashes: join("a/", "b") == "a/b", join(".", "b") == "b"; an
// absolute `b` is returned as it is, as os.path.join does.
std::string join(std::string_view a, std::string_view b);

// The folder part of a path ("a/b/c.npz" -> "a/b"; "c.npz" -> ".").
std::string parent_of(const std::string& path);

// Whether `path` is `folder` or lies below it, compared as absolute, lexically normalised paths
// ("data/./o/" is inside "./data"); symbolic links are not followed.
bool is_within(const std::string& path, const std::string& folder);

// Removes trailing slashes (but keeps "/").
std::string strip_trailing_slashes(std::string path);

// Each path without the folders all of them share: names that tell runs apart where their last
// parts alone would not ("s/a/run1", "s/b/run1" -> "a/run1", "b/run1"). A single path keeps its
// last part.
std::vector<std::string> without_common_folders(const std::vector<std::string>& paths);

}  // namespace trainio::util
