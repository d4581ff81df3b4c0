#pragma once
// The ZIP container as Python's zipfile writes it for numpy.savez (force_zip64=True): each local
// header carries a zip64 extra field; the central directory and end record use zip64 forms only
// past zipfile's limit of 2^31-1 bytes. Also the few parsers a reader needs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainio::format::zip {

inline constexpr std::uint64_t kZip64Limit = (1ULL << 31) - 1;  // zipfile.ZIP64_LIMIT
inline constexpr std::size_t kLocalHeaderFixed = 30;
inline constexpr std::size_t kEndRecordSize = 22;
inline constexpr std::size_t kZip64LocatorSize = 20;
inline constexpr std::size_t kZip64EndRecordSize = 56;  // without the extensible data zipfile never writes
inline constexpr std::uint16_t kStored = 0;
inline constexpr std::uint16_t kDeflated = 8;

struct Member {
  std::string name;
  std::uint16_t method = kStored;
  std::uint32_t crc32 = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;
  std::uint64_t header_offset = 0;
};

// Local file header + name + zip64 extra, exactly as zipfile.ZipInfo.FileHeader(zip64=True).
std::string local_header(const Member& m);
inline std::size_t local_header_size(const Member& m) { return kLocalHeaderFixed + m.name.size() + 20; }

// One central directory entry (zipfile._write_end_record).
std::string central_entry(const Member& m);

// End of central directory (and the zip64 end record + locator when zipfile would write them).
std::string end_records(std::uint64_t entries, std::uint64_t cd_offset, std::uint64_t cd_size);

// Appends the `bytes` low bytes of `v`, least significant first (ZIP's and pickle's integers).
inline void append_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// ---- reading ----

struct EndRecord {
  std::uint64_t entries = 0;
  std::uint64_t cd_size = 0;
  std::uint64_t cd_offset = 0;
};
// Parses the 22-byte end record (no comment), nullopt when the signature is wrong.
std::optional<EndRecord> parse_end_record(std::string_view bytes);
// The zip64 end record (the 56 bytes before the zip64 locator): its entries and central
// directory replace the end record's. False when the signature is wrong.
bool read_zip64_end_record(std::string_view bytes56, EndRecord& end);

// Finds member `name` in a central directory; nullopt when absent or malformed.
std::optional<Member> find_in_central_directory(std::string_view cd, std::string_view name);

struct LocalHeader {
  std::uint16_t name_length = 0;
  std::uint16_t extra_length = 0;
  std::uint16_t method = 0;
};
std::optional<LocalHeader> parse_local_header(std::string_view bytes30);

// CRC-32 (zip's, zlib's) of `size` bytes, continuing from `crc`.
std::uint32_t crc32(std::uint32_t crc, const void* data, std::size_t size);

}  // namespace trainio::format::zip
