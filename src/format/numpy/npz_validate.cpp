// NPZ validation: the archive's structure, both members' CRCs and shapes.
#include "format/numpy/npz.hpp"

#include <fmt/format.h>

#include <zlib.h>

#include <algorithm>
#include <string_view>

#include "format/numpy/npy.hpp"
#include "format/archive/zip.hpp"
#include "util/error.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

namespace {

// Reads a member's bytes (inflating a deflated one) in chunks, feeding `sink`; returns the CRC.
template <typename Sink>
std::optional<std::string> scan_member(storage::File& in, const zip::Member& m, std::uint64_t data_offset,
                                       std::uint32_t& crc, Sink&& sink) {
  util::Bytes chunk = util::chunk_buffer(m.method == zip::kStored ? m.size : m.compressed_size);
  util::Bytes out = util::chunk_buffer(m.method == zip::kStored ? 0 : m.size);
  crc = 0;
  if (m.method == zip::kStored) {
    for (std::uint64_t done = 0; done < m.size;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), m.size - done));
      in.pread_exact(chunk.data(), n, data_offset + done);
      crc = zip::crc32(crc, chunk.data(), n);
      sink(chunk.data(), n);
      done += n;
    }
    return std::nullopt;
  }
  if (m.method != zip::kDeflated) return fmt::format("{} uses compression method {}", m.name, m.method);
  z_stream z{};
  if (inflateInit2(&z, -15) != Z_OK) return std::string("cannot start zlib");
  std::uint64_t consumed = 0, produced = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (z.avail_in == 0) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), m.compressed_size - consumed));
      if (n == 0) break;
      in.pread_exact(chunk.data(), n, data_offset + consumed);
      consumed += n;
      z.next_in = reinterpret_cast<Bytef*>(chunk.data());
      z.avail_in = static_cast<uInt>(n);
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      return fmt::format("{}: corrupt deflate stream", m.name);
    }
    const std::size_t n = out.size() - z.avail_out;
    crc = zip::crc32(crc, out.data(), n);
    sink(out.data(), n);
    produced += n;
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) return fmt::format("{}: deflate stream ends early", m.name);
  if (produced != m.size) return fmt::format("{}: inflates to {} bytes, the directory says {}", m.name, produced, m.size);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate_npz(const plan::DataFile& f) {
  storage::File in = storage::File::open(f.path);
  const std::uint64_t size = in.size();
  if (size < zip::kEndRecordSize) return fmt::format("only {} bytes: not a ZIP archive", size);
  char end_bytes[zip::kEndRecordSize];
  in.pread_exact(end_bytes, sizeof end_bytes, size - sizeof end_bytes);
  auto end = zip::parse_end_record({end_bytes, sizeof end_bytes});
  if (!end) return std::string("no end-of-central-directory record at the end (truncated?)");
  if (end->cd_offset == 0xffffffffu || end->cd_size == 0xffffffffu) {
    char rec[zip::kZip64EndRecordSize];
    if (size < zip::kEndRecordSize + zip::kZip64LocatorSize + sizeof rec) return std::string("bad zip64 end record");
    in.pread_exact(rec, sizeof rec, size - zip::kEndRecordSize - zip::kZip64LocatorSize - sizeof rec);
    if (!zip::read_zip64_end_record({rec, sizeof rec}, *end)) return std::string("bad zip64 end record");
  }
  if (end->cd_offset + end->cd_size > size || end->cd_size > (1u << 20)) return std::string("central directory out of range");
  std::string cd(end->cd_size, '\0');
  in.pread_exact(cd.data(), cd.size(), end->cd_offset);
  for (const char* name : {"x.npy", "y.npy"}) {
    const auto m = zip::find_in_central_directory(cd, name);
    if (!m) return fmt::format("no {} member", name);
    char local[zip::kLocalHeaderFixed];
    if (m->header_offset + sizeof local > size) return fmt::format("{}: local header out of range", name);
    in.pread_exact(local, sizeof local, m->header_offset);
    const auto h = zip::parse_local_header({local, sizeof local});
    if (!h) return fmt::format("{}: bad local header", name);
    const std::uint64_t data_offset = m->header_offset + sizeof local + h->name_length + h->extra_length;
    if (data_offset + m->compressed_size > size) return fmt::format("{}: data runs past the end of the file", name);
    std::string header;
    std::uint32_t crc = 0;
    const auto problem = scan_member(in, *m, data_offset, crc, [&](const char* p, std::size_t n) {
      if (header.size() < 4096) header.append(p, std::min<std::size_t>(n, 4096 - header.size()));
    });
    if (problem) return problem;
    if (crc != m->crc32) return fmt::format("{}: CRC-32 {:08x}, the directory says {:08x}", name, crc, m->crc32);
    std::string why;
    const auto npy_header = npy::parse_header(header, &why);
    if (!npy_header) return fmt::format("{}: {}", name, why);
    if (std::string(name) == "x.npy") {
      const auto dims = f.sample.shape();
      bool ok = npy_header->ndims == dims.size() + 1 && npy_header->shape[dims.size()] == f.num_samples &&
                npy_header->item_size == config::element_size(f.sample.dtype);
      for (std::size_t i = 0; ok && i < dims.size(); ++i) ok = npy_header->shape[i] == dims[i];
      if (!ok) return std::string("x.npy has another shape or type than the workload's samples");
    } else if (npy_header->ndims != 1 || npy_header->shape[0] != f.num_samples) {
      return fmt::format("y.npy holds {} labels, expected {}", npy_header->ndims ? npy_header->shape[0] : 0, f.num_samples);
    }
  }
  return std::nullopt;
}

}  // namespace trainio::format
