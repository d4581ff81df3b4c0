#pragma once
// What storage tests share: the thread's storage calls as the engine's recorders see them, and
// files of known bytes.

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "storage/io_observer.hpp"

namespace trainio::test {

struct Calls : storage::IoObserver {
  std::vector<storage::OpEvent> events;
  void on_op(const storage::OpEvent& e) override { events.push_back(e); }
  int count(storage::Op op) const {
    int n = 0;
    for (const auto& e : events) n += e.op == op;
    return n;
  }
  std::uint64_t bytes(storage::Op op) const {
    std::uint64_t n = 0;
    for (const auto& e : events)
      if (e.op == op) n += e.bytes;
    return n;
  }
  // The calls in order, by name ("open fstat read close").
  std::string sequence() const {
    std::string s;
    for (const auto& e : events) s += std::string(s.empty() ? "" : " ") + storage::op_name(e.op);
    return s;
  }
};

inline std::string pattern(std::size_t size) {
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i) s[i] = static_cast<char>('a' + i % 23);
  return s;
}

inline void write_text(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace trainio::test
