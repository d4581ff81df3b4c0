#include "format/npz.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <string_view>

#include "format/npy.hpp"
#include "format/stream_writer.hpp"
#include "format/zip.hpp"
#include "util/error.hpp"

namespace trainio::format {

namespace {

// numpy.lib.format.BUFFER_SIZE: read_array reads a non-file stream in chunks of this many bytes.
constexpr std::size_t kNumpyChunk = 1u << 18;
// zipfile.ZipExtFile.MIN_READ_SIZE.
constexpr std::size_t kZipMinRead = 4096;

struct Layout {
  std::string x_header, y_header;
  zip::Member x, y;
  std::uint64_t cd_offset = 0;
  std::string central;  // both central entries
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

Error corrupt(const std::string& path, const std::string& what) {
  return data_error(fmt::format("'{}' is not a valid NPZ file: {}", path, what),
                    "regenerate the dataset with 'trainio generate' (or check dataset.format)");
}

}  // namespace

// ---------------------------------------------------------------- writer

std::uint64_t NpzWriter::expected_size(const plan::DataFile& f) const {
  Layout l = layout_of(f);
  const std::uint64_t cd_size = zip::central_entry(l.x).size() + zip::central_entry(l.y).size();
  return l.cd_offset + cd_size + zip::end_records(2, l.cd_offset, cd_size).size();
}

std::uint64_t NpzWriter::write(const plan::DataFile& f, storage::File& out, ContentSource& content) {
  Layout l = layout_of(f);
  StreamWriter w(out, buffer_);
  // The x local header needs the CRC of the data, known only at the end: write a placeholder
  // and patch it last, as Python's zipfile does.
  w.append_zeros(zip::local_header_size(l.x));
  std::uint32_t crc = 0;
  w.append(l.x_header, &crc);
  w.append_content(f.data_bytes(), content, &crc);
  l.x.crc32 = crc;

  l.y.crc32 = zeros_crc(8 * f.num_samples, zip::crc32(0, l.y_header.data(), l.y_header.size()));
  w.append(zip::local_header(l.y));
  w.append(l.y_header);
  w.append_zeros(8 * f.num_samples);

  const std::string cd = zip::central_entry(l.x) + zip::central_entry(l.y);
  w.append(cd);
  w.append(zip::end_records(2, l.cd_offset, cd.size()));
  const std::uint64_t total = w.flush();
  const std::string x_local = zip::local_header(l.x);
  out.pwrite_all(x_local.data(), x_local.size(), 0);
  return total;
}

// ---------------------------------------------------------------- reader

NpzReader::NpzReader(std::size_t python_buffer_size)
    : file_(python_buffer_size), scratch_(kNumpyChunk + kZipMinRead) {}

std::size_t NpzReader::shared_read(Member& m, char* dest, std::size_t n) {
  // zipfile._SharedFile.read: seek to the member's own position, read, remember tell().
  file_.seek(static_cast<std::int64_t>(m.file_pos), SEEK_SET);
  const std::size_t got = file_.read(dest, n);
  m.file_pos = file_.tell();
  return got;
}

void NpzReader::open_member(Member& m, std::uint64_t header_offset, std::uint64_t size, const std::string& path) {
  // ZipFile.open: read the local header, the name and the extra field (three _SharedFile reads).
  m = Member{};
  m.file_pos = header_offset;
  char fixed[zip::kLocalHeaderFixed];
  if (shared_read(m, fixed, sizeof fixed) != sizeof fixed) throw corrupt(path, "truncated local file header");
  const auto local = zip::parse_local_header({fixed, sizeof fixed});
  if (!local) throw corrupt(path, "bad local file header signature");
  if (local->method != zip::kStored)
    throw data_error(fmt::format("'{}' holds a deflate-compressed member; reading compressed NPZ is not supported yet", path),
                     "generate the dataset without dataset.compression");
  char name[256];
  if (local->name_length > sizeof name || shared_read(m, name, local->name_length) != local->name_length)
    throw corrupt(path, "truncated member name");
  if (local->extra_length > 0) {
    char extra[512];
    if (local->extra_length > sizeof extra || shared_read(m, extra, local->extra_length) != local->extra_length)
      throw corrupt(path, "truncated extra field");
  }
  m.compress_left = size;
  m.left = size;
}

std::size_t NpzReader::member_read(Member& m, char* dest, std::size_t n) {
  // ZipExtFile.read(n) for a stored member.
  std::size_t out = 0;
  const std::size_t end = n + m.readbuffer_offset;
  if (end < m.readbuffer_len) {
    std::memcpy(dest, m.readbuffer.data() + m.readbuffer_offset, n);
    m.readbuffer_offset = end;
    return n;
  }
  std::size_t want = end - m.readbuffer_len;
  const std::size_t buffered = m.readbuffer_len - m.readbuffer_offset;
  std::memcpy(dest, m.readbuffer.data() + m.readbuffer_offset, buffered);
  out = buffered;
  m.readbuffer_len = m.readbuffer_offset = 0;
  while (want > 0 && m.left > 0) {
    // _read1 -> _read2: at least MIN_READ_SIZE, at most what is left of the member.
    std::uint64_t ask = want > kZipMinRead ? want : kZipMinRead;
    if (ask > m.compress_left) ask = m.compress_left;
    if (ask == 0) break;
    char* target = want < ask ? m.readbuffer.data() : dest + out;
    const std::size_t got = shared_read(m, target, static_cast<std::size_t>(ask));
    if (got == 0) return out;  // zipfile raises EOFError; the caller reports it
    m.compress_left -= got;
    const std::size_t data = got > m.left ? static_cast<std::size_t>(m.left) : got;
    m.left -= data;
    if (want < data) {  // keep the surplus for the next read, as ZipExtFile._readbuffer
      std::memcpy(dest + out, target, want);
      m.readbuffer_len = data;
      m.readbuffer_offset = want;
      out += want;
      want = 0;
      break;
    }
    out += data;
    want -= data;
  }
  return out;
}

void NpzReader::member_read_exact(Member& m, char* dest, std::size_t n, const std::string& path, const char* what) {
  // numpy.lib.format._read_bytes
  std::size_t done = 0;
  while (done < n) {
    const std::size_t got = member_read(m, dest + done, n - done);
    if (got == 0)
      throw data_error(fmt::format("'{}' ends early: reading {}, expected {} bytes, got {}", path, what, n, done),
                       "the file is truncated: regenerate the dataset with 'trainio generate'");
    done += got;
  }
}

std::uint64_t NpzReader::read(const std::string& path, const plan::SampleShape& shape,
                              std::uint64_t samples_in_file, std::uint64_t /*sample*/) {
  // np.load(path): open, sniff 6 magic bytes, step back.
  file_.open(path);
  char magic[6];
  const std::size_t got_magic = file_.read(magic, sizeof magic);
  file_.seek(-static_cast<std::int64_t>(got_magic), SEEK_CUR);
  if (got_magic < 4 || std::memcmp(magic, "PK\x03\x04", 4) != 0) throw corrupt(path, "no ZIP signature at the start");

  // zipfile._EndRecData: size, end record, zip64 locator probe.
  file_.seek(0, SEEK_END);
  const std::uint64_t size = file_.tell();
  if (size < zip::kEndRecordSize + zip::kZip64LocatorSize) throw corrupt(path, "file too short for a ZIP archive");
  file_.seek(-static_cast<std::int64_t>(zip::kEndRecordSize), SEEK_END);
  char end_bytes[64];
  const std::size_t end_len = file_.read_all(end_bytes, sizeof end_bytes);
  auto end = zip::parse_end_record({end_bytes, end_len});
  if (end_len != zip::kEndRecordSize || !end) throw corrupt(path, "no end of central directory record");
  file_.seek(-static_cast<std::int64_t>(zip::kEndRecordSize + zip::kZip64LocatorSize), SEEK_END);
  char locator[zip::kZip64LocatorSize];
  const std::size_t locator_len = file_.read(locator, sizeof locator);
  if (locator_len == sizeof locator && std::memcmp(locator, "PK\x06\x07", 4) == 0) {
    // A zip64 end record precedes the locator (files > 2 GiB): read it as zipfile does.
    char rec[56];
    file_.seek(-static_cast<std::int64_t>(zip::kEndRecordSize + zip::kZip64LocatorSize + sizeof rec), SEEK_END);
    if (file_.read(rec, sizeof rec) != sizeof rec || std::memcmp(rec, "PK\x06\x06", 4) != 0)
      throw corrupt(path, "bad zip64 end record");
    auto u64 = [&](int at) {
      std::uint64_t v = 0;
      for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(rec[at + i])) << (8 * i);
      return v;
    };
    end->entries = u64(32);
    end->cd_size = u64(40);
    end->cd_offset = u64(48);
  }

  // _RealGetContents: read the central directory and find x.npy.
  if (end->cd_size > 1u << 20 || end->cd_offset + end->cd_size > size) throw corrupt(path, "bad central directory");
  std::string cd(end->cd_size, '\0');
  file_.seek(static_cast<std::int64_t>(end->cd_offset), SEEK_SET);
  if (file_.read(cd.data(), cd.size()) != cd.size()) throw corrupt(path, "truncated central directory");
  const auto x = zip::find_in_central_directory(cd, "x.npy");
  if (!x) throw corrupt(path, "no x.npy member");

  // NpzFile['x']: open the member once to check the NPY magic, then again for read_array.
  Member m;
  open_member(m, x->header_offset, x->size, path);
  char npy_magic[6];
  member_read_exact(m, npy_magic, sizeof npy_magic, path, "magic string");
  open_member(m, x->header_offset, x->size, path);

  // numpy.lib.format.read_array: magic + version, header length, header, then 256 KiB chunks.
  char prelude[npy::kPreludeV1];
  member_read_exact(m, prelude, sizeof prelude, path, "array header");
  const std::size_t header_len = static_cast<unsigned char>(prelude[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(prelude[9])) << 8);
  std::string header(prelude, sizeof prelude);
  header.resize(sizeof prelude + header_len);
  member_read_exact(m, header.data() + sizeof prelude, header_len, path, "array header");
  std::string why;
  const auto h = npy::parse_header(header, &why);
  if (!h) throw corrupt(path, "x.npy: " + why);
  // The file must hold what the workload expects; anything else is another dataset.
  const auto dims = shape.shape();
  bool matches = h->ndims == dims.size() + 1 && h->shape[dims.size()] == samples_in_file &&
                 h->item_size == config::element_size(shape.dtype);
  for (std::size_t i = 0; matches && i < dims.size(); ++i) matches = h->shape[i] == dims[i];
  if (!matches)
    throw data_error(fmt::format("'{}' holds x of a different shape or type than the workload expects", path),
                     "the dataset was generated for another workload: regenerate it with 'trainio generate'");

  const std::uint64_t data = h->data_bytes();
  const std::size_t chunk = (kNumpyChunk / h->item_size) * h->item_size;
  for (std::uint64_t done = 0; done < data;) {
    const std::size_t n = data - done < chunk ? static_cast<std::size_t>(data - done) : chunk;
    member_read_exact(m, scratch_.data(), n, path, "array data");
    done += n;
  }
  // The NpzFile is dropped: its file is closed.
  file_.close();
  return data;
}

}  // namespace trainio::format
