// NPZ reading as np.load does it: CPython's zipfile over its buffered file, numpy's read_array.
#include "format/numpy/npz.hpp"

#include <fmt/format.h>

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "format/numpy/npy.hpp"
#include "format/archive/zip.hpp"
#include "util/error.hpp"

namespace trainio::format {

namespace {

// numpy.lib.format.BUFFER_SIZE: read_array reads a non-file stream in chunks of this many bytes.
constexpr std::size_t kNumpyChunk = 1u << 18;
// zipfile.ZipExtFile.MIN_READ_SIZE.
constexpr std::size_t kZipMinRead = 4096;

Error corrupt(const std::string& path, const std::string& what) {
  return data_error(fmt::format("'{}' is not a valid NPZ file: {}", path, what),
                    "regenerate the dataset with 'trainio generate' (or check dataset.format)");
}

}  // namespace

NpzReader::NpzReader(std::size_t python_buffer_size)
    : file_(python_buffer_size), scratch_(kNumpyChunk + kZipMinRead) {}

NpzReader::~NpzReader() {
  if (inflater_) {
    inflateEnd(static_cast<z_stream*>(inflater_));
    delete static_cast<z_stream*>(inflater_);
  }
}

std::size_t NpzReader::shared_read(Member& m, char* dest, std::size_t n) {
  // zipfile._SharedFile.read: seek to the member's own position, read, remember tell().
  file_.seek(static_cast<std::int64_t>(m.file_pos), SEEK_SET);
  const std::size_t got = file_.read(dest, n);
  m.file_pos = file_.tell();
  return got;
}

void NpzReader::open_member(Member& m, const zip::Member& info, const std::string& path) {
  // ZipFile.open: read the local header, the name and the extra field (three _SharedFile reads).
  m = Member{};
  m.file_pos = info.header_offset;
  char fixed[zip::kLocalHeaderFixed];
  if (shared_read(m, fixed, sizeof fixed) != sizeof fixed) throw corrupt(path, "truncated local file header");
  const auto local = zip::parse_local_header({fixed, sizeof fixed});
  if (!local) throw corrupt(path, "bad local file header signature");
  if (local->method != zip::kStored && local->method != zip::kDeflated)
    throw corrupt(path, fmt::format("compression method {} is not one numpy writes", local->method));
  char name[256];
  if (local->name_length > sizeof name || shared_read(m, name, local->name_length) != local->name_length)
    throw corrupt(path, "truncated member name");
  if (local->extra_length > 0) {
    char extra[512];
    if (local->extra_length > sizeof extra || shared_read(m, extra, local->extra_length) != local->extra_length)
      throw corrupt(path, "truncated extra field");
  }
  m.compress_left = info.compressed_size;
  m.left = info.size;
  m.deflated = local->method == zip::kDeflated;
  if (m.deflated) {
    if (!inflater_) {
      inflater_ = new z_stream{};
      if (inflateInit2(static_cast<z_stream*>(inflater_), -15) != Z_OK) throw internal_error("zlib refused to start");
    } else {
      inflateReset(static_cast<z_stream*>(inflater_));
    }
    tail_ = 0;
  }
}

std::size_t NpzReader::read1(Member& m, char* out, std::size_t n, const std::string& path) {
  if (m.eof || n == 0) return 0;
  // _read2: at least MIN_READ_SIZE, at most what is left of the member, one _SharedFile.read.
  auto read2 = [&](char* dest, std::size_t want) -> std::size_t {
    if (m.compress_left == 0) return 0;
    std::uint64_t ask = std::max<std::uint64_t>(want, kZipMinRead);
    ask = std::min<std::uint64_t>(ask, m.compress_left);
    const std::size_t got = shared_read(m, dest, static_cast<std::size_t>(ask));
    if (got == 0) throw data_error(fmt::format("'{}' ends inside a ZIP member", path),
                                   "the file is truncated: regenerate the dataset with 'trainio generate'");
    m.compress_left -= got;
    return got;
  };
  std::size_t produced = 0;
  if (!m.deflated) {
    produced = read2(out, n);
    m.eof = m.compress_left == 0;
  } else {
    // decompressobj.decompress(unconsumed_tail + _read2(n - len(tail)), max(n, MIN_READ_SIZE))
    const std::size_t limit = std::max(n, kZipMinRead);
    if (n > tail_) {
      const std::size_t room = std::max<std::size_t>(n - tail_, kZipMinRead);
      if (compressed_.size() < tail_ + room) compressed_.resize(tail_ + room);
      tail_ += read2(compressed_.data() + tail_, n - tail_);
    }
    auto* z = static_cast<z_stream*>(inflater_);
    z->next_in = reinterpret_cast<Bytef*>(compressed_.data());
    z->avail_in = static_cast<uInt>(tail_);
    z->next_out = reinterpret_cast<Bytef*>(out);
    z->avail_out = static_cast<uInt>(limit);
    int rc = Z_OK;
    while (z->avail_out > 0 && z->avail_in > 0 && rc == Z_OK) rc = inflate(z, Z_SYNC_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) throw corrupt(path, "corrupt deflate stream");
    produced = limit - z->avail_out;
    const std::size_t unconsumed = z->avail_in;
    std::memmove(compressed_.data(), compressed_.data() + (tail_ - unconsumed), unconsumed);
    tail_ = unconsumed;
    m.eof = rc == Z_STREAM_END || (m.compress_left == 0 && tail_ == 0);
  }
  if (produced > m.left) produced = static_cast<std::size_t>(m.left);
  m.left -= produced;
  if (m.left == 0) m.eof = true;
  return produced;
}

std::size_t NpzReader::member_read(Member& m, char* dest, std::size_t n, const std::string& path) {
  // ZipExtFile.read(n): serve from _readbuffer, then _read1 until n bytes; a _read1 that brings
  // more than asked keeps the surplus in _readbuffer (only small reads do: at most 4096 bytes).
  const std::size_t end = n + m.readbuffer_offset;
  if (end < m.readbuffer_len) {
    std::memcpy(dest, m.readbuffer.data() + m.readbuffer_offset, n);
    m.readbuffer_offset = end;
    return n;
  }
  std::size_t want = end - m.readbuffer_len;
  const std::size_t buffered = m.readbuffer_len - m.readbuffer_offset;
  std::memcpy(dest, m.readbuffer.data() + m.readbuffer_offset, buffered);
  std::size_t out = buffered;
  m.readbuffer_len = m.readbuffer_offset = 0;
  while (want > 0 && !m.eof) {
    const bool small = want < kZipMinRead;
    char* target = small ? m.readbuffer.data() : dest + out;
    const std::size_t got = read1(m, target, want, path);
    if (got == 0) break;
    if (want < got) {
      std::memcpy(dest + out, target, want);
      m.readbuffer_len = got;
      m.readbuffer_offset = want;
      out += want;
      break;
    }
    if (small) std::memcpy(dest + out, target, got);
    out += got;
    want -= got;
  }
  return out;
}

void NpzReader::member_read_exact(Member& m, char* dest, std::size_t n, const std::string& path, const char* what) {
  // numpy.lib.format._read_bytes
  std::size_t done = 0;
  while (done < n) {
    const std::size_t got = member_read(m, dest + done, n - done, path);
    if (got == 0)
      throw data_error(fmt::format("'{}' ends early: reading {}, expected {} bytes, got {}", path, what, n, done),
                       "the file is truncated: regenerate the dataset with 'trainio generate'");
    done += got;
  }
}

std::uint64_t NpzReader::read(const SampleRequest& r) {
  const std::string& path = *r.path;
  const plan::SampleShape& shape = r.shape;
  const std::uint64_t samples_in_file = r.samples_in_file;
  // np.load(path): open, sniff 6 magic bytes, step back.
  file_.open(path);
  char magic[6];
  const std::size_t got_magic = file_.peek(magic, sizeof magic);
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
    char rec[zip::kZip64EndRecordSize];
    file_.seek(-static_cast<std::int64_t>(zip::kEndRecordSize + zip::kZip64LocatorSize + sizeof rec), SEEK_END);
    if (file_.read(rec, sizeof rec) != sizeof rec || !zip::read_zip64_end_record({rec, sizeof rec}, *end))
      throw corrupt(path, "bad zip64 end record");
  }

  // _RealGetContents: read the central directory and find x.npy.
  if (end->cd_size > 1u << 20 || end->cd_offset + end->cd_size > size) throw corrupt(path, "bad central directory");
  std::string& cd = central_directory_;  // kept: no allocation per sample
  cd.resize(end->cd_size);
  file_.seek(static_cast<std::int64_t>(end->cd_offset), SEEK_SET);
  if (file_.read(cd.data(), cd.size()) != cd.size()) throw corrupt(path, "truncated central directory");
  const auto x = zip::find_in_central_directory(cd, "x.npy");
  if (!x) throw corrupt(path, "no x.npy member");

  // NpzFile['x']: open the member once to check the NPY magic, then again for read_array.
  Member m;
  open_member(m, *x, path);
  char npy_magic[6];
  member_read_exact(m, npy_magic, sizeof npy_magic, path, "magic string");
  open_member(m, *x, path);

  // numpy.lib.format.read_array: magic + version, header length, header, then 256 KiB chunks.
  char prelude[npy::kPreludeV1];
  member_read_exact(m, prelude, sizeof prelude, path, "array header");
  const std::size_t header_len = static_cast<unsigned char>(prelude[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(prelude[9])) << 8);
  std::string& header = header_;  // kept: no allocation per sample
  header.assign(prelude, sizeof prelude);
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
  // The NpzFile is dropped: its file is closed. DLIO then takes the sample out of the array.
  file_.close();
  return shape.bytes();
}

}  // namespace trainio::format
