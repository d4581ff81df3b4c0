#pragma once
// The structure of a CSV data file, checked as the run reads it: exactly `rows` rows, the last
// one '\n'-ended, each starting and ending with a digit and as long as `columns` values of one to
// three digits with their separators can be (2 to 4 bytes a value). Row ends are found with
// memchr; values are not parsed (the framework's CPU time, which reader.preprocess_time
// emulates): `trainio validate` checks every value (CsvScan). Nothing is allocated; the problem
// is put in words only once something is wrong.

#include <cstddef>
#include <cstdint>
#include <string>

namespace trainio::format {

class CsvRows {
 public:
  CsvRows(std::uint64_t columns, std::uint64_t rows) : columns_(columns), rows_(rows) {}

  // The next `n` bytes of the file; false at the first problem (then describe() tells it).
  bool feed(const unsigned char* p, std::size_t n);
  // After the last byte: the file must end with a complete row, after exactly `rows` of them.
  bool finish();
  std::string describe() const;

 private:
  enum class Problem { none, row_start, row_end, short_row, long_row, too_many, cut, rows };
  bool fail(Problem kind, std::uint64_t byte);

  std::uint64_t columns_, rows_;
  std::uint64_t done_ = 0;       // complete rows
  std::uint64_t row_bytes_ = 0;  // bytes of the row being read, so far
  std::uint64_t at_ = 0;         // bytes before the current piece
  unsigned char last_ = 0;       // the byte before the current piece
  Problem problem_ = Problem::none;
  std::uint64_t problem_byte_ = 0, problem_length_ = 0;
};

}  // namespace trainio::format
