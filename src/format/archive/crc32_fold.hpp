#pragma once
// CRC-32 (zip/zlib polynomial, reflected 0xEDB88320) by carry-less multiplication folding
// (PCLMULQDQ), several times faster than zlib's table method. zip::crc32 uses it when the CPU
// has the instruction.

#include <cstddef>
#include <cstdint>

namespace trainio::format::zip {

// Whether this CPU can run crc32_fold.
bool fold_available();

// The raw (pre- and post-inverted by the caller) CRC register advanced over `size` bytes;
// `size` must be a multiple of 16 and at least 64.
std::uint32_t crc32_fold(std::uint32_t reg, const unsigned char* data, std::size_t size);

}  // namespace trainio::format::zip
