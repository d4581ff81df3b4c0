#include "format/tabular/csv_scan.hpp"

#include <fmt/format.h>

#include <cstring>

namespace trainio::format {

namespace {

inline unsigned digit_bit(unsigned char c) { return static_cast<unsigned char>(c - '0') < 10; }
inline unsigned separator_bit(unsigned char c) { return (c == ',') | (c == '\n'); }

// 16 bytes at a time through GCC/Clang vector extensions (SSE2, NEON, ...): the scalar form is
// ~20 instructions a byte, far below the speed the file is read at.
typedef unsigned char Bytes16 __attribute__((vector_size(16)));
typedef signed char Mask16 __attribute__((vector_size(16)));

inline Bytes16 load16(const unsigned char* p) {
  Bytes16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline Mask16 digits16(Bytes16 c) { return (c - static_cast<unsigned char>('0')) < static_cast<unsigned char>(10); }

inline bool any16(Mask16 m) {
  std::uint64_t halves[2];
  std::memcpy(halves, &m, sizeof halves);
  return (halves[0] | halves[1]) != 0;
}

// Whether bytes [from, n) of p (from >= 3), each seen with the three bytes before it, hold
// anything but fields of one to three digits worth 0..254 between separators.
bool fields_wrong(const unsigned char* p, std::size_t from, std::size_t n) {
  Mask16 bad = {};
  std::size_t i = from;
  for (; i + 16 <= n; i += 16) {
    const Bytes16 c = load16(p + i), c1 = load16(p + i - 1), c2 = load16(p + i - 2), c3 = load16(p + i - 3);
    const Mask16 d = digits16(c), d1 = digits16(c1), d2 = digits16(c2), d3 = digits16(c3);
    const Mask16 s = (c == static_cast<unsigned char>(',')) | (c == static_cast<unsigned char>('\n'));
    bad |= ~(d | s);        // another character
    bad |= s & ~d1;         // an empty field
    bad |= d & d1 & d2 & d3;  // four digits or more
    const Mask16 over = (c2 > static_cast<unsigned char>('2')) |
                        ((c2 == static_cast<unsigned char>('2')) &
                         ((c1 > static_cast<unsigned char>('5')) |
                          ((c1 == static_cast<unsigned char>('5')) & (c > static_cast<unsigned char>('4')))));
    bad |= d & d1 & d2 & over;  // three digits above 254
  }
  if (any16(bad)) return true;
  unsigned rest = 0;
  for (; i < n; ++i) {
    const unsigned char c = p[i], c1 = p[i - 1], c2 = p[i - 2], c3 = p[i - 3];
    const unsigned d = digit_bit(c), d1 = digit_bit(c1), d2 = digit_bit(c2), d3 = digit_bit(c3);
    const unsigned s = separator_bit(c);
    rest |= (d | s) ^ 1u;
    rest |= s & (d1 ^ 1u);
    rest |= d & d1 & d2 & d3;
    const unsigned over = (c2 > '2') | ((c2 == '2') & ((c1 > '5') | ((c1 == '5') & (c > '4'))));
    rest |= d & d1 & d2 & over;
  }
  return rest != 0;
}

std::uint64_t count_commas(const unsigned char* p, std::size_t n) {
  std::uint64_t count = 0;
  std::size_t i = 0;
  while (i + 16 <= n) {
    // Byte-wide counters, emptied before they can overflow.
    Bytes16 counts = {};
    for (int k = 0; k < 255 && i + 16 <= n; ++k, i += 16)
      counts -= reinterpret_cast<Bytes16>(load16(p + i) == static_cast<unsigned char>(','));
    for (int lane = 0; lane < 16; ++lane) count += counts[lane];
  }
  for (; i < n; ++i) count += p[i] == ',';
  return count;
}

}  // namespace

bool CsvScan::feed(const unsigned char* p, std::size_t n) {
  if (problem_ != Problem::none) return false;
  // The first three bytes are checked against the state left by the previous piece, the rest
  // against the bytes before them.
  const std::size_t head = n < 3 ? n : 3;
  const auto rows = rows_, fields = fields_, at = at_;
  const unsigned digits = digits_, value = value_;
  if (!feed_exact(p, head)) return false;
  if (head == n) return true;
  bool wrong = fields_wrong(p, 3, n);
  // Row ends: every row holds columns - 1 commas and its newline.
  std::size_t pos = head;
  while (!wrong) {
    const void* nl = std::memchr(p + pos, '\n', n - pos);
    const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const unsigned char*>(nl) - p) : n;
    fields_ += count_commas(p + pos, end - pos);
    if (!nl) break;
    if (++fields_ != columns_) wrong = true;
    ++rows_;
    fields_ = 0;
    pos = end + 1;
  }
  if (wrong) {
    // Say what and where: the same piece again, byte by byte, from the state before it.
    rows_ = rows, fields_ = fields, at_ = at, digits_ = digits, value_ = value;
    if (feed_exact(p, n)) return fail(Problem::character, 0);  // not reached: both passes check the same
    return false;
  }
  // The field the piece ends in (at most three digits, or fields_wrong would have said so).
  unsigned trailing = 0;
  while (trailing < 3 && digit_bit(p[n - 1 - trailing])) ++trailing;
  digits_ = trailing;
  value_ = 0;
  for (unsigned k = trailing; k > 0; --k) value_ = value_ * 10 + static_cast<unsigned>(p[n - k] - '0');
  at_ = at + n;
  return true;
}

bool CsvScan::feed_exact(const unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned c = p[i];
    if (c - '0' < 10u) {
      value_ = value_ * 10 + (c - '0');
      if (++digits_ > 3 || value_ > 254) return fail(Problem::value, i);
      continue;
    }
    if (c != ',' && c != '\n') return fail(Problem::character, i);
    if (digits_ == 0) return fail(Problem::empty_field, i);
    digits_ = 0;
    value_ = 0;
    ++fields_;
    if (c == '\n') {
      if (fields_ != columns_) return fail(Problem::columns, i);
      ++rows_;
      fields_ = 0;
    }
  }
  at_ += n;
  return true;
}

bool CsvScan::finish(std::uint64_t rows) {
  if (problem_ != Problem::none) return false;
  if (fields_ != 0 || digits_ != 0) return fail(Problem::cut, 0);
  if (rows_ != rows) return fail(Problem::rows, 0);
  return true;
}

bool CsvScan::fail(Problem kind, std::size_t i) {
  problem_ = kind;
  problem_line_ = rows_ + 1;
  problem_byte_ = at_ + i;
  problem_count_ = kind == Problem::rows ? rows_ : fields_;
  return false;
}

std::string CsvScan::describe(std::uint64_t rows) const {
  switch (problem_) {
    case Problem::none: break;
    case Problem::character: return fmt::format("line {}: unexpected character at byte {}", problem_line_, problem_byte_);
    case Problem::empty_field: return fmt::format("line {}: an empty field at byte {}", problem_line_, problem_byte_);
    case Problem::value: return fmt::format("line {}: a value out of range 0..254 at byte {}", problem_line_, problem_byte_);
    case Problem::columns: return fmt::format("line {}: {} values, expected {}", problem_line_, problem_count_, columns_);
    case Problem::cut: return fmt::format("the last line ({}) is cut short", problem_line_);
    case Problem::rows: return fmt::format("{} rows, expected {}", problem_count_, rows);
  }
  return {};
}

}  // namespace trainio::format
