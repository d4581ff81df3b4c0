#include "format/tar.hpp"

#include <fmt/format.h>

#include <cstring>

#include "format/stream_writer.hpp"
#include "plan/layout.hpp"
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

std::string key(const plan::DataFile& f, std::uint64_t sample) {
  // "<shard name>_<sample>": WebDataset groups members by the name before the first dot.
  std::string stem = f.path.substr(f.path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find('.'));
  return fmt::format("{}_{:06}", stem, sample);
}

std::uint64_t sample_offset(std::uint64_t sample, std::uint64_t sample_bytes) {
  return sample * (kBlock + padded(sample_bytes) + kBlock + padded(sizeof kLabel - 1));
}

}  // namespace tar

std::optional<std::uint64_t> TarWriter::expected_size(const plan::DataFile& f) const {
  const std::uint64_t members = tar::sample_offset(f.num_samples, f.sample.bytes()) + 2 * tar::kBlock;
  return (members + tar::kRecord - 1) / tar::kRecord * tar::kRecord;
}

void TarWriter::write_bytes(const plan::DataFile& f, storage::File& out, ContentSource& content) {
  StreamWriter w(out, buffer_);
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

std::uint64_t TarSampleReader::read(const std::string& path, const plan::SampleShape& shape, std::uint64_t,
                                    std::uint64_t sample) {
  const std::uint64_t bytes = shape.bytes();
  const std::size_t want = tar::kBlock + static_cast<std::size_t>(bytes);
  if (buffer_.size() < want) buffer_.resize(want);
  storage::File in = storage::File::open(path);
  in.pread_exact(buffer_.data(), want, tar::sample_offset(sample, bytes));
  in.close();
  return bytes;
}

std::optional<std::string> validate_tar(const plan::DataFile& f) {
  storage::File in = storage::File::open(f.path);
  const std::uint64_t size = in.size();
  const std::uint64_t bytes = f.sample.bytes();
  std::uint64_t at = 0;
  char h[tar::kBlock];
  for (std::uint64_t i = 0; i < f.num_samples; ++i) {
    for (const char* ext : {".bin", ".cls"}) {
      if (at + tar::kBlock > size) return fmt::format("ends before sample {}", i);
      in.pread_exact(h, sizeof h, at);
      unsigned sum = 0;
      for (std::size_t k = 0; k < sizeof h; ++k) sum += (k >= 148 && k < 156) ? ' ' : static_cast<unsigned char>(h[k]);
      if (tar::parse_octal(&h[148], 8) != sum) return fmt::format("member header at byte {}: bad checksum", at);
      const std::string name(h, strnlen(h, 100));
      const std::string want_name = tar::key(f, i) + ext;
      if (name != want_name) return fmt::format("member {} is '{}', expected '{}'", 2 * i + (ext[1] == 'c'), name, want_name);
      const std::uint64_t member = tar::parse_octal(&h[124], 12);
      const std::uint64_t want_size = ext[1] == 'b' ? bytes : 1;
      if (member != want_size) return fmt::format("'{}' holds {} bytes, expected {}", name, member, want_size);
      at += tar::kBlock + (member + tar::kBlock - 1) / tar::kBlock * tar::kBlock;
    }
  }
  if (at + 2 * tar::kBlock > size) return std::string("no end-of-archive blocks");
  util::Bytes tail(size - at);
  in.pread_exact(tail.data(), tail.size(), at);
  for (const char c : tail)
    if (c != 0) return std::string("data after the last member");
  return std::nullopt;
}

}  // namespace trainio::format
