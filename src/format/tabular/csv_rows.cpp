#include "format/tabular/csv_rows.hpp"

#include <fmt/format.h>

#include <cstring>

namespace trainio::format {

namespace {
inline bool is_digit(unsigned char c) { return static_cast<unsigned char>(c - '0') < 10; }
}  // namespace

bool CsvRows::feed(const unsigned char* p, std::size_t n) {
  if (problem_ != Problem::none) return false;
  if (n == 0) return true;
  const std::uint64_t shortest = 2 * columns_, longest = 4 * columns_;  // with the separator after each value
  std::size_t pos = 0;
  while (pos < n) {
    if (row_bytes_ == 0 && !is_digit(p[pos])) return fail(Problem::row_start, at_ + pos);
    const void* nl = std::memchr(p + pos, '\n', n - pos);
    if (!nl) {
      row_bytes_ += n - pos;
      if (row_bytes_ >= longest) return fail(Problem::long_row, at_ + n);
      break;
    }
    const auto end = static_cast<std::size_t>(static_cast<const unsigned char*>(nl) - p);
    const unsigned char before = end > 0 ? p[end - 1] : last_;
    if (!is_digit(before)) return fail(Problem::row_end, at_ + end);
    row_bytes_ += end - pos + 1;
    problem_length_ = row_bytes_;
    if (row_bytes_ < shortest) return fail(Problem::short_row, at_ + end);
    if (row_bytes_ > longest) return fail(Problem::long_row, at_ + end);
    if (++done_ > rows_) return fail(Problem::too_many, at_ + end);
    row_bytes_ = 0;
    pos = end + 1;
  }
  last_ = p[n - 1];
  at_ += n;
  return true;
}

bool CsvRows::finish() {
  if (problem_ != Problem::none) return false;
  if (row_bytes_ != 0) return fail(Problem::cut, at_);
  if (done_ != rows_) return fail(Problem::rows, at_);
  return true;
}

bool CsvRows::fail(Problem kind, std::uint64_t byte) {
  problem_ = kind;
  problem_byte_ = byte;
  return false;
}

std::string CsvRows::describe() const {
  const std::uint64_t line = done_ + 1;
  switch (problem_) {
    case Problem::none: break;
    case Problem::row_start: return fmt::format("line {} does not start with a value (byte {})", line, problem_byte_);
    case Problem::row_end: return fmt::format("line {} does not end with a value (byte {})", line, problem_byte_);
    case Problem::short_row:
      return fmt::format("line {} is {} bytes long, too short for {} values (byte {})", line, problem_length_, columns_,
                         problem_byte_);
    case Problem::long_row:
      return fmt::format("line {} is longer than {} values of 0..254 can be (byte {})", line, columns_, problem_byte_);
    case Problem::too_many: return fmt::format("more than {} rows", rows_);
    case Problem::cut: return fmt::format("the last line ({}) is cut short", line);
    case Problem::rows: return fmt::format("{} rows, expected {}", done_, rows_);
  }
  return {};
}

}  // namespace trainio::format
