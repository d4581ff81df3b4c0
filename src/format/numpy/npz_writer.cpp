// NPZ writing: numpy.savez's stored archive and savez_compressed's deflated one.
#include "format/numpy/npz.hpp"

#include <fmt/format.h>

#include <zlib.h>

#include <algorithm>
#include <string_view>

#include "format/numpy/npy.hpp"
#include "format/stream_writer.hpp"
#include "format/archive/zip.hpp"
#include "util/error.hpp"

namespace trainio::format {

namespace {

struct Layout {
  std::string x_header, y_header;
  zip::Member x, y;
  std::uint64_t cd_offset = 0;
};

// x has shape (sample dims..., samples), as DLIO's generator writes it.
Layout layout_of(const plan::DataFile& f) {
  Layout l;
  std::uint64_t shape[plan::kMaxDims + 1];
  const auto dims = f.sample.shape();
  std::copy(dims.begin(), dims.end(), shape);
  shape[dims.size()] = f.num_samples;
  l.x_header = npy::header(f.sample.dtype, {shape, dims.size() + 1});
  const std::uint64_t labels[1] = {f.num_samples};
  l.y_header = npy::header(config::ElementType::int64, labels);
  l.x.name = "x.npy";
  l.x.size = l.x.compressed_size = l.x_header.size() + f.data_bytes();
  l.y.name = "y.npy";
  l.y.size = l.y.compressed_size = l.y_header.size() + 8 * f.num_samples;
  l.y.header_offset = zip::local_header_size(l.x) + l.x.compressed_size;
  l.cd_offset = l.y.header_offset + zip::local_header_size(l.y) + l.y.compressed_size;
  return l;
}

std::uint32_t zeros_crc(std::uint64_t n, std::uint32_t crc) {
  static const char zeros[4096] = {};
  while (n > 0) {
    const std::size_t k = n > sizeof zeros ? sizeof zeros : static_cast<std::size_t>(n);
    crc = zip::crc32(crc, zeros, k);
    n -= k;
  }
  return crc;
}


}  // namespace

struct NpzWriter::Stored {
  Layout layout;            // x's CRC left 0: each file has its own
  std::string y_local;      // the labels' local header (their CRC follows from their count)
  std::string y_central;    // and central entry
  std::string end;          // the end records
  std::uint64_t size = 0;   // of the whole file
};

const NpzWriter::Stored& NpzWriter::stored(const plan::DataFile& f) const {
  return *stored_.get(f.sample, f.num_samples, [&] {
    auto s = std::make_shared<Stored>();
    Layout& l = s->layout;
    l = layout_of(f);
    l.y.crc32 = zeros_crc(8 * f.num_samples, zip::crc32(0, l.y_header.data(), l.y_header.size()));
    s->y_local = zip::local_header(l.y);
    s->y_central = zip::central_entry(l.y);
    const std::uint64_t cd_size = zip::central_entry(l.x).size() + s->y_central.size();
    s->end = zip::end_records(2, l.cd_offset, cd_size);
    s->size = l.cd_offset + cd_size + s->end.size();
    return std::shared_ptr<const Stored>(std::move(s));
  });
}

std::optional<std::uint64_t> NpzWriter::expected_size(const plan::DataFile& f) const {
  if (deflate_level_ >= 0) return std::nullopt;  // compressed sizes are known only after writing
  return stored(f).size;
}

void NpzWriter::write_bytes(const plan::DataFile& f, storage::Output& out, ContentSource& content) {
  if (deflate_level_ >= 0) {
    write_deflated(f, out, content);
    return;
  }
  const Stored& s = stored(f);
  zip::Member x = s.layout.x;
  StreamWriter w(out, buffer_, beside_);
  // The x local header needs the CRC of the data, known only at the end: write a placeholder
  // and patch it last, as Python's zipfile does.
  w.append_zeros(zip::local_header_size(x));
  Checksum crc;
  w.append(s.layout.x_header, &crc);
  w.append_content(f.data_bytes(), content, &crc);
  x.crc32 = crc.value;

  w.append(s.y_local);
  w.append(s.layout.y_header);
  w.append_zeros(8 * f.num_samples);

  w.append(zip::central_entry(x));
  w.append(s.y_central);
  w.append(s.end);
  const std::string x_local = zip::local_header(x);
  const bool patched = w.overwrite_buffered(0, x_local);
  w.flush();
  if (!patched) out.write_at(x_local.data(), x_local.size(), 0);
}

namespace {

// Raw deflate (zipfile: zlib.compressobj(level, DEFLATED, -15)) of everything a member holds,
// appended to `w`; returns the compressed size.
class Deflater {
 public:
  explicit Deflater(int level) {
    if (deflateInit2(&z_, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw internal_error("zlib refused to start a deflate stream");
  }
  ~Deflater() { deflateEnd(&z_); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  void add(const char* data, std::size_t n, StreamWriter& w, bool last) {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z_.avail_in = static_cast<uInt>(n);
    char out[1 << 16];
    int rc;
    do {
      z_.next_out = reinterpret_cast<Bytef*>(out);
      z_.avail_out = sizeof out;
      rc = deflate(&z_, last ? Z_FINISH : Z_NO_FLUSH);
      const std::size_t produced = sizeof out - z_.avail_out;
      w.append({out, produced});
      compressed += produced;
    } while (z_.avail_out == 0 || (last && rc != Z_STREAM_END));
  }
  std::uint64_t compressed = 0;

 private:
  z_stream z_{};
};

}  // namespace

void NpzWriter::write_deflated(const plan::DataFile& f, storage::Output& out, ContentSource& content) {
  Layout l = layout_of(f);
  l.x.method = l.y.method = zip::kDeflated;
  StreamWriter w(out, buffer_, beside_);
  w.append_zeros(zip::local_header_size(l.x));  // patched at the end with sizes and CRC
  Deflater x(deflate_level_);
  std::uint32_t crc = zip::crc32(0, l.x_header.data(), l.x_header.size());
  x.add(l.x_header.data(), l.x_header.size(), w, false);
  if (input_.size() < (1u << 20)) input_.resize(1u << 20);
  for (std::uint64_t left = f.data_bytes(); left > 0;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, input_.size()));
    content.fill(input_.data(), n);
    crc = zip::crc32(crc, input_.data(), n);
    left -= n;
    x.add(input_.data(), n, w, left == 0);
  }
  if (f.data_bytes() == 0) x.add(nullptr, 0, w, true);
  l.x.crc32 = crc;
  l.x.compressed_size = x.compressed;

  // y: the labels (int64 zeros), deflated as they stream from a fixed buffer of zeros: never a
  // buffer of 8 bytes per sample. Its local header, like x's, is patched in at the end.
  l.y.header_offset = zip::local_header_size(l.x) + l.x.compressed_size;
  w.append_zeros(zip::local_header_size(l.y));
  Deflater y(deflate_level_);
  l.y.crc32 = zeros_crc(8 * f.num_samples, zip::crc32(0, l.y_header.data(), l.y_header.size()));
  y.add(l.y_header.data(), l.y_header.size(), w, f.num_samples == 0);
  // Zero only what the labels use of the buffer: a whole MiB per small file cost more than the file.
  std::fill_n(input_.begin(), std::min<std::uint64_t>(input_.size(), 8 * f.num_samples), '\0');
  for (std::uint64_t left = 8 * f.num_samples; left > 0;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, input_.size()));
    left -= n;
    y.add(input_.data(), n, w, left == 0);
  }
  l.y.compressed_size = y.compressed;
  l.cd_offset = l.y.header_offset + zip::local_header_size(l.y) + l.y.compressed_size;
  const std::string cd = zip::central_entry(l.x) + zip::central_entry(l.y);
  w.append(cd);
  w.append(zip::end_records(2, l.cd_offset, cd.size()));
  const std::string y_local = zip::local_header(l.y);
  const std::string x_local = zip::local_header(l.x);
  const bool patched = w.overwrite_buffered(l.y.header_offset, y_local) && w.overwrite_buffered(0, x_local);
  w.flush();
  if (!patched) {
    out.write_at(y_local.data(), y_local.size(), l.y.header_offset);
    out.write_at(x_local.data(), x_local.size(), 0);
  }
}

}  // namespace trainio::format
