#pragma once
// Text made safe inside XML, HTML and SVG (JUnit reports, the HTML reports and their charts).

#include <string>

namespace trainio::report {

inline std::string markup_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace trainio::report
