#include "format/archive/tar.hpp"

#include <fmt/format.h>

#include <cstring>

#include "format/stream_writer.hpp"
#include "plan/layout.hpp"
#include "util/error.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

namespace tar {

namespace {
constexpr std::uint64_t kMtime = 1704067200;  // fixed (2024-01-01) so that shards are reproducible
constexpr char kLabel[] = "0";

std::uint64_t padded(std::uint64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

void octal(char* field, std::size_t width, std::uint64_t value) {
  // width-1 octal digits and a NUL; past that, GNU's base-256 (high bit set, big-endian).
  std::string digits = fmt::format("{:0{}o}", value, width - 1);
  if (digits.size() <= width - 1) {
    std::memcpy(field, digits.data(), width - 1);
    field[width - 1] = '\0';
    return;
  }
  std::memset(field, 0, width);
  field[0] = static_cast<char>(0x80);
  for (std::size_t i = width - 1; i > 0 && value; --i, value >>= 8) field[i] = static_cast<char>(value & 0xff);
}

std::uint64_t parse_octal(const char* field, std::size_t width) {
  if (static_cast<unsigned char>(field[0]) & 0x80) {
    std::uint64_t v = 0;
    for (std::size_t i = 1; i < width; ++i) v = (v << 8) | static_cast<unsigned char>(field[i]);
    return v;
  }
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width && field[i] >= '0' && field[i] <= '7'; ++i) v = v * 8 + static_cast<std::uint64_t>(field[i] - '0');
  return v;
}
}  // namespace

std::string header(const std::string& name, std::uint64_t size) {
  std::string h(kBlock, '\0');
  std::memcpy(h.data(), name.data(), std::min<std::size_t>(name.size(), 100));
  octal(&h[100], 8, 0644);
  octal(&h[108], 8, 0);
  octal(&h[116], 8, 0);
  octal(&h[124], 12, size);
  octal(&h[136], 12, kMtime);
  std::memset(&h[148], ' ', 8);  // the checksum counts its own field as spaces
  h[156] = '0';
  std::memcpy(&h[257], "ustar\0" "00", 8);
  unsigned sum = 0;
  for (const char c : h) sum += static_cast<unsigned char>(c);
  const std::string chk = fmt::format("{:06o}", sum);
  std::memcpy(&h[148], chk.data(), 6);
  h[154] = '\0';
  h[155] = ' ';
  return h;
}

std::string_view stem_of(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name.substr(0, name.find('.'));
}

std::string key(const plan::DataFile& f, std::uint64_t sample) {
  // "<shard name>_<sample>": WebDataset groups members by the name before the first dot.
  return fmt::format("{}_{:06}", stem_of(f.path), sample);
}

std::uint64_t sample_offset(std::uint64_t sample, std::uint64_t sample_bytes) {
  return sample * (kBlock + padded(sample_bytes) + kBlock + padded(sizeof kLabel - 1));
}

std::uint64_t shard_size(std::uint64_t samples, std::uint64_t sample_bytes) {
  const std::uint64_t members = sample_offset(samples, sample_bytes) + 2 * kBlock;
  return (members + kRecord - 1) / kRecord * kRecord;
}

const char* header_problem(const char* h, std::string_view stem, std::uint64_t sample, std::string_view ext,
                           std::uint64_t size) {
  unsigned sum = 0;
  for (std::size_t k = 0; k < kBlock; ++k) sum += (k >= 148 && k < 156) ? ' ' : static_cast<unsigned char>(h[k]);
  if (parse_octal(&h[148], 8) != sum) return "bad header checksum";
  if (std::memcmp(&h[257], "ustar", 5) != 0) return "not a ustar header";
  // The name, "<stem>_<sample, 6 digits or more><ext>", compared in place.
  char digits[24];
  const int width = fmt::formatted_size("{:06}", sample);
  fmt::format_to(digits, "{:06}", sample);
  const std::size_t length = stem.size() + 1 + static_cast<std::size_t>(width) + ext.size();
  if (length > 100 || strnlen(h, 100) != length || std::memcmp(h, stem.data(), stem.size()) != 0 ||
      h[stem.size()] != '_' || std::memcmp(h + stem.size() + 1, digits, static_cast<std::size_t>(width)) != 0 ||
      std::memcmp(h + stem.size() + 1 + width, ext.data(), ext.size()) != 0)
    return "another member's name";
  if (h[156] != '0' && h[156] != '\0') return "not a regular file";
  if (parse_octal(&h[124], 12) != size) return "another size";
  return nullptr;
}

}  // namespace tar

std::optional<std::uint64_t> TarWriter::expected_size(const plan::DataFile& f) const {
  return tar::shard_size(f.num_samples, f.sample.bytes());
}

void TarWriter::write_bytes(const plan::DataFile& f, storage::Output& out, ContentSource& content) {
  StreamWriter w(out, buffer_, beside_);
  const std::uint64_t bytes = f.sample.bytes();
  const std::uint64_t pad = (tar::kBlock - bytes % tar::kBlock) % tar::kBlock;
  for (std::uint64_t i = 0; i < f.num_samples; ++i) {
    const std::string key = tar::key(f, i);
    w.append(tar::header(key + ".bin", bytes));
    w.append_content(bytes, content);
    w.append_zeros(pad);
    w.append(tar::header(key + ".cls", 1));
    w.append("0");
    w.append_zeros(tar::kBlock - 1);
  }
  const std::uint64_t total = *expected_size(f);
  w.append_zeros(total - w.position());  // two zero blocks, then padding to a whole record
  w.flush();
}

namespace {

Error damaged_shard(const std::string& path, const std::string& what) {
  return data_error(fmt::format("'{}' is not the tar shard the dataset's settings describe: {}", path, what),
                    "the file is damaged or was written for other settings: regenerate the dataset with 'trainio generate'");
}

bool all_zero(const char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

}  // namespace

std::uint64_t TarSampleReader::read(const SampleRequest& r) {
  const std::string& path = *r.path;
  const plan::SampleShape& shape = r.shape;
  const std::uint64_t samples_in_file = r.samples_in_file;
  const std::uint64_t sample = r.sample;
  const std::uint64_t bytes = shape.bytes();
  const std::uint64_t offset = tar::sample_offset(sample, bytes);
  // The shard's last sample is read on to the end of the archive (its label, the two zero blocks,
  // the record padding) and one byte past it, still in one read: so a shard that is cut short or
  // grown is noticed without a stat, once per shard.
  const bool last = sample + 1 == samples_in_file;
  const std::uint64_t shard = tar::shard_size(samples_in_file, bytes);
  const std::size_t want = last ? static_cast<std::size_t>(shard - offset + 1) : tar::kBlock + static_cast<std::size_t>(bytes);
  if (buffer_.size() < want) buffer_.resize(want);
  file_.reopen(path);
  std::size_t got = 0;
  if (!last) {
    file_.pread_exact(buffer_.data(), want, offset);
    got = want;
  } else {
    got = file_.pread_some(buffer_.data(), want, offset);
    // A short read before the end of the file is rare; only then is the rest asked for.
    while (got + 1 < want) {
      const std::size_t more = file_.pread_some(buffer_.data() + got, want - got, offset + got);
      if (more == 0) break;
      got += more;
    }
  }
  file_.close();
  const char* h = buffer_.data();
  if (got < tar::kBlock + bytes)
    throw damaged_shard(path, fmt::format("it ends inside sample {} (byte {})", sample, offset + got));
  if (const char* problem = tar::header_problem(h, tar::stem_of(path), sample, ".bin", bytes))
    throw damaged_shard(path, fmt::format("the header of sample {} at byte {}: {}", sample, offset, problem));
  if (last) {
    if (got == want) throw damaged_shard(path, fmt::format("more than the {} bytes of the archive", shard));
    if (got + 1 < want) throw damaged_shard(path, fmt::format("{} bytes, expected {}", offset + got, shard));
    const std::size_t label = tar::kBlock + static_cast<std::size_t>((bytes + tar::kBlock - 1) / tar::kBlock * tar::kBlock);
    if (!all_zero(h + tar::kBlock + bytes, label - tar::kBlock - bytes))
      throw damaged_shard(path, fmt::format("the padding after sample {} is not zero", sample));
    if (const char* problem = tar::header_problem(h + label, tar::stem_of(path), sample, ".cls", 1))
      throw damaged_shard(path, fmt::format("the label header of sample {}: {}", sample, problem));
    if (h[label + tar::kBlock] != '0' || !all_zero(h + label + tar::kBlock + 1, want - 1 - label - tar::kBlock - 1))
      throw damaged_shard(path, "the last label or the end-of-archive blocks are not what was written");
  }
  return bytes;
}

std::optional<std::string> validate_tar(const plan::DataFile& f) {
  storage::File in = storage::File::open(f.path);
  const std::uint64_t size = in.size();
  const std::uint64_t bytes = f.sample.bytes();
  const std::uint64_t expected = tar::shard_size(f.num_samples, bytes);
  if (size != expected) return fmt::format("{} bytes, expected {}", size, expected);
  const std::string_view stem = tar::stem_of(f.path);
  std::uint64_t at = 0;
  char h[tar::kBlock];
  for (std::uint64_t i = 0; i < f.num_samples; ++i) {
    for (const char* ext : {".bin", ".cls"}) {
      const bool data = ext[1] == 'b';
      const std::uint64_t member = data ? bytes : 1;
      in.pread_exact(h, sizeof h, at);
      if (const char* problem = tar::header_problem(h, stem, i, ext, member))
        return fmt::format("member {} ('{}{}') at byte {}: {}", 2 * i + (data ? 0 : 1), tar::key(f, i), ext, at, problem);
      at += tar::kBlock;
      // The member's last block: the end of its data, then zeros (the label is "0").
      const std::uint64_t padded = (member + tar::kBlock - 1) / tar::kBlock * tar::kBlock;
      const std::size_t tail = static_cast<std::size_t>(padded - member);
      if (tail > 0 || !data) {
        in.pread_exact(h, tar::kBlock, at + padded - tar::kBlock);
        const std::size_t used = tar::kBlock - tail;
        if ((!data && h[0] != '0') || !all_zero(h + used, tail))
          return fmt::format("the padding of member {} at byte {} is not what was written", 2 * i + (data ? 0 : 1), at);
      }
      at += padded;
    }
  }
  util::Bytes rest(size - at);
  in.pread_exact(rest.data(), rest.size(), at);
  if (!all_zero(rest.data(), rest.size())) return std::string("the end-of-archive blocks are not zero");
  return std::nullopt;
}

}  // namespace trainio::format
