#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord uses it, and TensorFlow's
// masking of stored CRCs. Uses the SSE 4.2 crc32 instruction when the CPU has it.

#include <cstddef>
#include <cstdint>

namespace trainio::format::crc32c {

std::uint32_t extend(std::uint32_t crc, const void* data, std::size_t size);
inline std::uint32_t value(const void* data, std::size_t size) { return extend(0, data, size); }

// masked = ((crc >> 15) | (crc << 17)) + 0xa282ead8
inline std::uint32_t mask(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline std::uint32_t unmask(std::uint32_t masked) {
  const std::uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace trainio::format::crc32c
