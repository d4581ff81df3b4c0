#include "format/parquet/compress.hpp"

#include <zlib.h>
#include <zstd.h>

#include "util/error.hpp"

namespace trainio::format::parquet {

namespace {

void gzip(int level, std::string_view in, std::string& out) {
  z_stream s{};
  // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&s, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw internal_error("zlib deflateInit2 failed");
  out.resize(deflateBound(&s, in.size()) + 32);
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.avail_in = static_cast<uInt>(in.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&s, Z_FINISH);
  const auto produced = s.total_out;
  deflateEnd(&s);
  if (rc != Z_STREAM_END) throw internal_error("zlib deflate did not finish a page");
  out.resize(produced);
}

bool gunzip(std::string_view in, std::size_t size, std::string& out) {
  z_stream s{};
  if (inflateInit2(&s, 15 + 16) != Z_OK) return false;
  out.resize(size);
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.avail_in = static_cast<uInt>(in.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&s, Z_FINISH);
  const bool ok = rc == Z_STREAM_END && s.total_out == size;
  inflateEnd(&s);
  return ok;
}

}  // namespace

void compress(Codec codec, int level, std::string_view in, std::string& out) {
  switch (codec) {
    case Codec::gzip: gzip(level, in, out); return;
    case Codec::zstd: {
      out.resize(ZSTD_compressBound(in.size()));
      const std::size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), level);
      if (ZSTD_isError(n)) throw internal_error(std::string("ZSTD_compress: ") + ZSTD_getErrorName(n));
      out.resize(n);
      return;
    }
    case Codec::uncompressed: out.assign(in); return;
    case Codec::snappy: break;
  }
  throw internal_error("a Parquet codec trainio does not write");
}

bool decompress(Codec codec, std::string_view in, std::size_t size, std::string& out) {
  switch (codec) {
    case Codec::gzip: return gunzip(in, size, out);
    case Codec::zstd: {
      out.resize(size);
      const std::size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
      return !ZSTD_isError(n) && n == size;
    }
    case Codec::uncompressed:
      out.assign(in);
      return in.size() == size;
    case Codec::snappy: break;
  }
  return false;
}

}  // namespace trainio::format::parquet
