// The run's structural checks of JPEG and CSV files (JpegMarkers, CsvRows), fed in pieces of any
// size as reads deliver them.
#include <catch2/catch.hpp>

#include <string>

#include "format/tabular/csv_rows.hpp"
#include "format/image/jpeg_markers.hpp"

using namespace trainio;

namespace {

using Bytes = std::basic_string<unsigned char>;

// A baseline grayscale JPEG's structure: SOI, a quantisation table, the frame header (2 x 3
// pixels, one component), a scan header, coded data with a stuffed 0xFF and a restart marker, EOI.
Bytes jpeg(unsigned height = 2, unsigned width = 3, unsigned char components = 1) {
  Bytes b = {0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x05, 0x00, 0x01, 0x02,
             0xFF, 0xC0, 0x00, static_cast<unsigned char>(8 + 3 * components), 0x08,
             static_cast<unsigned char>(height >> 8), static_cast<unsigned char>(height),
             static_cast<unsigned char>(width >> 8), static_cast<unsigned char>(width), components};
  for (unsigned char c = 1; c <= components; ++c) b += Bytes{c, 0x11, 0x00};
  b += Bytes{0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00};
  b += Bytes{0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0xFF, 0xFF, 0xD9};
  return b;
}

std::string walk(const Bytes& bytes, std::size_t piece, unsigned height = 2, unsigned width = 3) {
  format::JpegMarkers m;
  m.start(height, width);
  for (std::size_t at = 0; at < bytes.size(); at += piece)
    if (const char* problem = m.feed(bytes.data() + at, std::min(piece, bytes.size() - at))) return problem;
  const char* problem = m.finish();
  return problem ? problem : "";
}

std::string rows(const std::string& text, std::size_t piece, std::uint64_t columns, std::uint64_t count) {
  format::CsvRows r(columns, count);
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t at = 0; at < text.size(); at += piece)
    if (!r.feed(p + at, std::min(piece, text.size() - at))) return r.describe();
  return r.finish() ? std::string() : r.describe();
}

}  // namespace

TEST_CASE("the JPEG marker walk passes a complete image in pieces of any size") {
  for (std::size_t piece : {1u, 2u, 3u, 5u, 13u, 1000u}) {
    INFO("piece " << piece);
    CHECK(walk(jpeg(), piece) == "");
  }
}

TEST_CASE("the JPEG marker walk refuses what is not the planned image") {
  const Bytes good = jpeg();
  for (std::size_t piece : {1u, 4u, 1000u}) {
    INFO("piece " << piece);
    CHECK(walk(Bytes(), piece) == "the file is empty");
    CHECK(walk(good.substr(0, good.size() - 1), piece) == "the file ends before the end-of-image marker at byte 41");
    CHECK(walk(good.substr(0, 15), piece) == "the file ends inside a header at byte 15");
    CHECK(walk(good + Bytes{0x00}, piece) == "1 bytes after the end-of-image marker");
    Bytes header = good;
    header[0] = 0x00;
    CHECK(walk(header, piece) == "no JPEG start-of-image marker at byte 0");
    Bytes tail = good;
    tail[tail.size() - 1] = 0x00;
    tail[tail.size() - 2] = 0x00;
    CHECK(walk(tail, piece) == "the file ends before the end-of-image marker at byte 42");
    Bytes stray = good;
    stray[stray.size() - 5] = 0xD8;  // the restart marker FF D0 becomes FF D8
    CHECK(walk(stray, piece) == "a marker out of place at byte 37");
    CHECK(walk(good, piece, 3, 3).find("the frame header says 2x3 pixels, 8-bit, 1 components; expected 3x3") == 0);
    CHECK(walk(jpeg(2, 3, 3), piece).find("3 components") != std::string::npos);
  }
}

TEST_CASE("the CSV row check passes complete rows and refuses cut, overwritten or miscounted files") {
  const std::string good = "1,22,254\n0,7,100\n";
  for (std::size_t piece : {1u, 2u, 3u, 7u, 1000u}) {
    INFO("piece " << piece);
    CHECK(rows(good, piece, 3, 2) == "");
    CHECK(rows("", piece, 3, 2) == "0 rows, expected 2");
    CHECK(rows(good.substr(0, good.size() - 1), piece, 3, 2) == "the last line (2) is cut short");
    CHECK(rows(good.substr(0, 9), piece, 3, 2) == "1 rows, expected 2");
    CHECK(rows(good, piece, 3, 1) == "more than 1 rows");
    CHECK(rows(std::string("\0garbage\0", 9) + good.substr(9), piece, 3, 2) == "line 1 does not start with a value (byte 0)");
    CHECK(rows("1,22,25,\n0,7,100\n", piece, 3, 2) == "line 1 does not end with a value (byte 8)");
    CHECK(rows("1,2\n0,7,100\n", piece, 3, 2) == "line 1 is 4 bytes long, too short for 3 values (byte 3)");
    CHECK(rows("1,22,2541234\n0,7,100\n", piece, 3, 2).find("line 1 is longer than 3 values") == 0);
  }
}
