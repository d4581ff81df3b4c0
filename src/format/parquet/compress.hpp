#pragma once
// Page compression for the codecs trainio writes: GZIP (a gzip member, RFC 1952, as Parquet's
// GZIP codec and the DLIO fork's `compression: gzip` use) and ZSTD (a Zstandard frame).

#include <cstdint>
#include <string>
#include <string_view>

#include "format/parquet/metadata.hpp"

namespace trainio::format::parquet {

// Compresses `in` into `out` (replacing its content).
void compress(Codec codec, int level, std::string_view in, std::string& out);
// Decompresses `in`, which must inflate to exactly `size` bytes; false when it does not.
bool decompress(Codec codec, std::string_view in, std::size_t size, std::string& out);

}  // namespace trainio::format::parquet
