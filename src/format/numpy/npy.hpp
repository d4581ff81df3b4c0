#pragma once
// The NPY array format (numpy.lib.format, version 1.0/2.0) as numpy 1.24 writes it: magic,
// header length, a Python-dict header padded with spaces to a multiple of 64 bytes ending in
// '\n', then the raw C-order data.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "config/enums.hpp"

namespace trainio::format::npy {

// numpy's dtype.descr: "|u1", "<i8", "<f4", ...
std::string_view descr(config::ElementType t);

// The complete header (magic through the final '\n') for an array of `shape` and `dtype`.
std::string header(config::ElementType dtype, std::span<const std::uint64_t> shape);

struct Header {
  std::uint64_t header_bytes = 0;  // where the data starts
  std::string descr;
  bool fortran_order = false;
  std::uint64_t shape[8] = {};
  unsigned ndims = 0;
  std::uint64_t item_size = 0;
  std::uint64_t data_bytes() const;
};

// Parses a header from the first bytes of an NPY stream. `bytes` must hold the whole header
// (read 10 bytes, then header_length). Returns nullopt, with `why` filled, when malformed.
std::optional<Header> parse_header(std::string_view bytes, std::string* why = nullptr);

// Bytes needed to know the header length: magic (6) + version (2) + length (2 or 4).
inline constexpr std::size_t kPreludeV1 = 10;

}  // namespace trainio::format::npy
