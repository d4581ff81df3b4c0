#include "format/sniff.hpp"

#include <cstdint>
#include <cstring>

#include "format/crc32c.hpp"

namespace trainio::format {

std::optional<config::Format> sniff(std::string_view h) {
  using config::Format;
  if (h.starts_with("\x93NUMPY")) return Format::npy;
  if (h.starts_with(std::string_view("PK\x03\x04", 4)))
    return h.find(".npy") != std::string_view::npos ? std::optional(Format::npz) : std::nullopt;
  if (h.starts_with("\x89HDF\r\n\x1a\n") || (h.size() >= 520 && h.substr(512).starts_with("\x89HDF\r\n\x1a\n")))
    return Format::hdf5;
  if (h.starts_with("\xff\xd8\xff")) return Format::jpeg;
  if (h.starts_with("\x89PNG\r\n\x1a\n")) return Format::png;
  if (h.starts_with("PAR1")) return Format::parquet;
  if (h.size() >= 262 && h.substr(257, 5) == "ustar") return Format::tar;
  if (h.size() >= 12) {
    std::uint32_t stored = 0;
    std::memcpy(&stored, h.data() + 8, 4);  // little-endian, as the writers and x86 are
    if (crc32c::mask(crc32c::value(h.data(), 8)) == stored) return Format::tfrecord;
  }
  return std::nullopt;
}

}  // namespace trainio::format
