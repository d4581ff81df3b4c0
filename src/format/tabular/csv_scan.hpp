#pragma once
// Checks the bytes of a CSV data file as they are read against what the plan says it holds:
// `rows` rows of `columns` integers 0..254, comma-separated, each row '\n'-ended. pandas would
// parse whatever is there; a benchmark must refuse a file that does not hold what was generated.
// The check runs on the read path for every file a reader loads: it allocates nothing and keeps
// to memory speed (a branch-free pass the compiler vectorises, memchr for the row ends); only
// when it finds something wrong does a byte-by-byte pass say what and where.

#include <cstddef>
#include <cstdint>
#include <string>

namespace trainio::format {

class CsvScan {
 public:
  explicit CsvScan(std::uint64_t columns) : columns_(columns) {}

  // The next `n` bytes of the file; false at the first problem (then describe() tells it).
  bool feed(const unsigned char* p, std::size_t n);
  // After the last byte: the file must end with a complete row, after exactly `rows` of them.
  bool finish(std::uint64_t rows);
  // The problem in words (formatted only once something failed).
  std::string describe(std::uint64_t rows) const;

 private:
  enum class Problem { none, character, empty_field, value, columns, cut, rows };
  bool feed_exact(const unsigned char* p, std::size_t n);
  bool fail(Problem kind, std::size_t i);

  std::uint64_t columns_;
  // The state between bytes: rows done, separators in the current row, digits and value of the
  // field being read, bytes seen.
  std::uint64_t rows_ = 0, fields_ = 0, at_ = 0;
  unsigned digits_ = 0, value_ = 0;
  Problem problem_ = Problem::none;
  std::uint64_t problem_line_ = 0, problem_byte_ = 0, problem_count_ = 0;
};

}  // namespace trainio::format
