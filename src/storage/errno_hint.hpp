#pragma once
// What to do about a failed storage call, by its errno: the "fix:" line of every storage error.

#include <string>

namespace trainio::storage {

// A one-line fix for `call` failing with `err`; never empty.
std::string hint_for_errno(const char* call, int err);

}  // namespace trainio::storage
