#include "format/archive/zip.hpp"

#include "format/archive/crc32_fold.hpp"

#include <zlib.h>

#include <algorithm>
#include <vector>

namespace trainio::format::zip {

namespace {

constexpr std::uint16_t kVersion20 = 20;      // zipfile.DEFAULT_VERSION
constexpr std::uint16_t kVersionZip64 = 45;   // zipfile.ZIP64_VERSION
constexpr std::uint16_t kMadeByUnix = (3 << 8);
constexpr std::uint32_t kExternalAttr = 0600u << 16;  // ZipInfo default for writestr/open('w')
constexpr std::uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // 1980-01-01
constexpr std::uint16_t kDosTime0 = 0;

void put16(std::string& s, std::uint64_t v) { append_le(s, v, 2); }
void put32(std::string& s, std::uint64_t v) { append_le(s, v, 4); }
void put64(std::string& s, std::uint64_t v) { append_le(s, v, 8); }
std::uint64_t get(std::string_view b, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}

}  // namespace

std::string local_header(const Member& m) {
  const bool large = m.size > kZip64Limit || m.compressed_size > kZip64Limit;
  std::string s;
  put32(s, 0x04034b50);
  put16(s, large ? kVersionZip64 : kVersion20);
  put16(s, 0);  // flags
  put16(s, m.method);
  put16(s, kDosTime0);
  put16(s, kDosDate1980);
  put32(s, m.crc32);
  put32(s, large ? 0xffffffffu : m.compressed_size);
  put32(s, large ? 0xffffffffu : m.size);
  put16(s, m.name.size());
  put16(s, 20);
  s += m.name;
  put16(s, 1);   // zip64 extra: id
  put16(s, 16);  // length
  put64(s, m.size);
  put64(s, m.compressed_size);
  return s;
}

std::string central_entry(const Member& m) {
  std::vector<std::uint64_t> extra;
  std::uint64_t size = m.size, csize = m.compressed_size, offset = m.header_offset;
  if (m.size > kZip64Limit || m.compressed_size > kZip64Limit) {
    extra.push_back(m.size);
    extra.push_back(m.compressed_size);
    size = csize = 0xffffffffu;
  }
  if (m.header_offset > kZip64Limit) {
    extra.push_back(m.header_offset);
    offset = 0xffffffffu;
  }
  const std::uint16_t version = extra.empty() ? kVersion20 : kVersionZip64;
  std::string s;
  put32(s, 0x02014b50);
  put16(s, kMadeByUnix | version);
  put16(s, version);
  put16(s, 0);  // flags
  put16(s, m.method);
  put16(s, kDosTime0);
  put16(s, kDosDate1980);
  put32(s, m.crc32);
  put32(s, csize);
  put32(s, size);
  put16(s, m.name.size());
  put16(s, extra.empty() ? 0 : 4 + 8 * extra.size());
  put16(s, 0);  // comment length
  put16(s, 0);  // disk
  put16(s, 0);  // internal attributes
  put32(s, kExternalAttr);
  put32(s, offset);
  s += m.name;
  if (!extra.empty()) {
    put16(s, 1);
    put16(s, 8 * extra.size());
    for (const auto v : extra) put64(s, v);
  }
  return s;
}

std::string end_records(std::uint64_t entries, std::uint64_t cd_offset, std::uint64_t cd_size) {
  std::string s;
  if (entries > 0xffff || cd_offset > kZip64Limit || cd_size > kZip64Limit) {
    const std::uint64_t zip64_end_offset = cd_offset + cd_size;
    put32(s, 0x06064b50);
    put64(s, 44);
    put16(s, kVersionZip64);
    put16(s, kVersionZip64);
    put32(s, 0);
    put32(s, 0);
    put64(s, entries);
    put64(s, entries);
    put64(s, cd_size);
    put64(s, cd_offset);
    put32(s, 0x07064b50);
    put32(s, 0);
    put64(s, zip64_end_offset);
    put32(s, 1);
    entries = std::min<std::uint64_t>(entries, 0xffff);
    cd_size = std::min<std::uint64_t>(cd_size, 0xffffffffu);
    cd_offset = std::min<std::uint64_t>(cd_offset, 0xffffffffu);
  }
  put32(s, 0x06054b50);
  put16(s, 0);
  put16(s, 0);
  put16(s, entries);
  put16(s, entries);
  put32(s, cd_size);
  put32(s, cd_offset);
  put16(s, 0);  // comment length
  return s;
}

std::optional<EndRecord> parse_end_record(std::string_view b) {
  if (b.size() < kEndRecordSize || get(b, 0, 4) != 0x06054b50) return std::nullopt;
  return EndRecord{get(b, 10, 2), get(b, 12, 4), get(b, 16, 4)};
}

bool read_zip64_end_record(std::string_view b, EndRecord& end) {
  if (b.size() < kZip64EndRecordSize || get(b, 0, 4) != 0x06064b50) return false;
  end = EndRecord{get(b, 32, 8), get(b, 40, 8), get(b, 48, 8)};
  return true;
}

std::optional<Member> find_in_central_directory(std::string_view cd, std::string_view name) {
  std::size_t at = 0;
  while (at + 46 <= cd.size() && get(cd, at, 4) == 0x02014b50) {
    const std::size_t name_len = get(cd, at + 28, 2);
    const std::size_t extra_len = get(cd, at + 30, 2);
    const std::size_t comment_len = get(cd, at + 32, 2);
    if (at + 46 + name_len + extra_len > cd.size()) return std::nullopt;
    if (cd.substr(at + 46, name_len) == name) {
      Member m;
      m.name = std::string(name);
      m.method = static_cast<std::uint16_t>(get(cd, at + 10, 2));
      m.crc32 = static_cast<std::uint32_t>(get(cd, at + 16, 4));
      m.compressed_size = get(cd, at + 20, 4);
      m.size = get(cd, at + 24, 4);
      m.header_offset = get(cd, at + 42, 4);
      // zip64 extra: the fields that were 0xffffffff, in order size, csize, offset.
      std::size_t e = at + 46 + name_len;
      const std::size_t e_end = e + extra_len;
      while (e + 4 <= e_end) {
        const auto id = get(cd, e, 2), len = get(cd, e + 2, 2);
        if (id == 1) {
          std::size_t f = e + 4;
          if (m.size == 0xffffffffu && f + 8 <= e_end) { m.size = get(cd, f, 8); f += 8; }
          if (m.compressed_size == 0xffffffffu && f + 8 <= e_end) { m.compressed_size = get(cd, f, 8); f += 8; }
          if (m.header_offset == 0xffffffffu && f + 8 <= e_end) m.header_offset = get(cd, f, 8);
        }
        e += 4 + len;
      }
      return m;
    }
    at += 46 + name_len + extra_len + comment_len;
  }
  return std::nullopt;
}

std::optional<LocalHeader> parse_local_header(std::string_view b) {
  if (b.size() < kLocalHeaderFixed || get(b, 0, 4) != 0x04034b50) return std::nullopt;
  LocalHeader h;
  h.method = static_cast<std::uint16_t>(get(b, 8, 2));
  h.name_length = static_cast<std::uint16_t>(get(b, 26, 2));
  h.extra_length = static_cast<std::uint16_t>(get(b, 28, 2));
  return h;
}

std::uint32_t crc32(std::uint32_t crc, const void* data, std::size_t size) {
  const auto* p = static_cast<const Bytef*>(data);
  if (size >= 64 && fold_available()) {
    const std::size_t folded = size & ~std::size_t{15};
    crc = ~crc32_fold(~crc, p, folded);
    p += folded;
    size -= folded;
  }
  while (size > 0) {
    const auto n = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
    crc = static_cast<std::uint32_t>(::crc32(crc, p, n));
    p += n;
    size -= n;
  }
  return crc;
}

}  // namespace trainio::format::zip
