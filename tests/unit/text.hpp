#pragma once
// What tests ask of the text of messages and files.

#include <string>

namespace trainio::test {

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace trainio::test
