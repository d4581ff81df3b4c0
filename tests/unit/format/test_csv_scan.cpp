#include <catch2/catch.hpp>

#include <string>

#include "format/tabular/csv_scan.hpp"

using namespace trainio;

namespace {

// Rows of values 0..254 as the CSV writer writes them.
std::string table(std::uint64_t rows, std::uint64_t columns) {
  std::string out;
  unsigned v = 7;
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t c = 0; c < columns; ++c) {
      if (c) out += ',';
      out += std::to_string(v % 255);
      v = v * 1103515245u + 12345u;
    }
    out += '\n';
  }
  return out;
}

// Feeds `bytes` in pieces of `piece`; returns "" when good, else the problem.
std::string scan(const std::string& bytes, std::size_t piece, std::uint64_t rows, std::uint64_t columns) {
  format::CsvScan s(columns);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (std::size_t at = 0; at < bytes.size(); at += piece)
    if (!s.feed(p + at, std::min(piece, bytes.size() - at))) return s.describe(rows);
  return s.finish(rows) ? std::string() : s.describe(rows);
}

}  // namespace

TEST_CASE("the CSV scan passes what the writer writes, in pieces of any size") {
  const std::string good = table(5, 40);
  for (std::size_t piece : {1u, 2u, 3u, 4u, 5u, 7u, 64u, 1000u, 1u << 20}) {
    INFO("piece " << piece);
    CHECK(scan(good, piece, 5, 40) == "");
  }
}

TEST_CASE("the CSV scan says what is wrong and where, whatever the piece size") {
  const std::string good = table(4, 10);
  const std::size_t second_row = good.find('\n') + 1;
  for (std::size_t piece : {1u, 3u, 4u, 9u, 1u << 20}) {
    INFO("piece " << piece);
    CHECK(scan(good.substr(0, good.size() / 2), piece, 4, 10).find("cut short") != std::string::npos);
    CHECK(scan(good.substr(0, good.size() - 1), piece, 4, 10) == "the last line (4) is cut short");
    CHECK(scan("", piece, 4, 10) == "0 rows, expected 4");
    CHECK(scan(good + good, piece, 4, 10) == "8 rows, expected 4");
    std::string s = good;
    s[second_row + 1] = 'x';
    CHECK(scan(s, piece, 4, 10).find("line 2: unexpected character") == 0);
    s = good.substr(0, second_row) + "," + good.substr(second_row);
    CHECK(scan(s, piece, 4, 10) == "line 2: an empty field at byte " + std::to_string(second_row));
    const std::string rest = good.substr(good.find(',', second_row));  // row 2 from its first comma
    s = good.substr(0, second_row) + "255" + rest;
    CHECK(scan(s, piece, 4, 10) == "line 2: a value out of range 0..254 at byte " + std::to_string(second_row + 2));
    s = good.substr(0, second_row) + "0001" + rest;
    CHECK(scan(s, piece, 4, 10) == "line 2: a value out of range 0..254 at byte " + std::to_string(second_row + 3));
    s = good;
    s.erase(0, good.find(',') + 1);  // the first value of row 1 and its comma
    CHECK(scan(s, piece, 4, 10) == "line 1: 9 values, expected 10");
  }
}
