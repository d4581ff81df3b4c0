#include "format/tfrecord/tfrecord.hpp"

#include <fmt/format.h>

#include <cstring>

#include "format/crc32c.hpp"
#include "format/stream_writer.hpp"
#include "storage/fs.hpp"
#include "storage/new_file.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

namespace tfrecord {

namespace {

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

// A length-delimited protobuf field: tag, length, bytes.
std::string field(unsigned number, std::string_view body) {
  std::string out;
  put_varint(out, (number << 3) | 2);
  put_varint(out, body.size());
  out.append(body);
  return out;
}

std::string field_header(unsigned number, std::uint64_t length) {
  std::string out;
  put_varint(out, (number << 3) | 2);
  put_varint(out, length);
  return out;
}

std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

bool get_varint(std::string_view& in, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

// Reads one length-delimited field; false at the end or on malformed input.
bool next_field(std::string_view& in, unsigned& number, std::string_view& body) {
  std::uint64_t tag = 0, len = 0;
  if (in.empty() || !get_varint(in, tag) || (tag & 7) != 2 || !get_varint(in, len) || len > in.size()) return false;
  number = static_cast<unsigned>(tag >> 3);
  body = in.substr(0, len);
  in.remove_prefix(len);
  return true;
}

}  // namespace

ExampleFrame example_frame(std::uint64_t image_bytes, std::int64_t size_value) {
  // Example{features=1: Features{feature=1: map entries {key=1, value=2: Feature}}}
  // Feature: bytes_list=1: BytesList{value=1}; int64_list=3: Int64List{value=1 (packed)}.
  std::string packed;
  put_varint(packed, static_cast<std::uint64_t>(size_value));
  const std::string size_feature = field(3, field(1, packed));
  const std::string size_entry = field(1, "size") + field(2, size_feature);

  const std::uint64_t bytes_list = 1 + varint_size(image_bytes) + image_bytes;  // value field
  const std::uint64_t image_feature = 1 + varint_size(bytes_list) + bytes_list;  // bytes_list field
  const std::string key = field(1, "image");
  const std::uint64_t image_entry = key.size() + 1 + varint_size(image_feature) + image_feature;

  const std::uint64_t features = (1 + varint_size(image_entry) + image_entry) + (1 + varint_size(size_entry.size()) + size_entry.size());
  ExampleFrame f;
  f.image_bytes = image_bytes;
  f.prefix = field_header(1, features) + field_header(1, image_entry) + key + field_header(2, image_feature) +
             field_header(1, bytes_list) + field_header(1, image_bytes);
  f.suffix = field(1, size_entry);
  return f;
}

std::string record_header(std::uint64_t length) {
  std::string h(kHeaderBytes, '\0');
  for (int i = 0; i < 8; ++i) h[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  const std::uint32_t crc = crc32c::mask(crc32c::value(h.data(), 8));
  for (int i = 0; i < 4; ++i) h[8 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  return h;
}

std::string index_path(const plan::DataFile& f) {
  const std::string root = f.path.substr(0, f.path.size() - f.relative.size());
  const std::string name = f.path.substr(f.path.find_last_of('/') + 1);
  return util::join(util::join(util::join(root, "index"), plan::split_folder(f.split)), name + ".idx");
}

bool parse_example(std::string_view data, std::uint64_t& image_bytes, std::int64_t& size_value) {
  unsigned number = 0;
  std::string_view features;
  if (!next_field(data, number, features) || number != 1 || !data.empty()) return false;
  bool have_image = false, have_size = false;
  std::string_view entry;
  while (next_field(features, number, entry)) {
    if (number != 1) return false;
    std::string_view key, value, list, item;
    unsigned n1 = 0, n2 = 0, n3 = 0, n4 = 0;
    if (!next_field(entry, n1, key) || n1 != 1 || !next_field(entry, n2, value) || n2 != 2) return false;
    if (!next_field(value, n3, list) || !next_field(list, n4, item) || n4 != 1) return false;
    if (key == "image" && n3 == 1) {
      image_bytes = item.size();
      have_image = true;
    } else if (key == "size" && n3 == 3) {
      std::uint64_t v = 0;
      if (!get_varint(item, v)) return false;
      size_value = static_cast<std::int64_t>(v);
      have_size = true;
    }
  }
  return have_image && have_size && features.empty();
}

}  // namespace tfrecord

std::optional<std::uint64_t> TfRecordWriter::expected_size(const plan::DataFile& f) const {
  return tfrecord::example_frame(f.sample.bytes(), tfrecord::size_value(f.sample)).record_bytes() * f.num_samples;
}

void TfRecordWriter::write(const plan::DataFile& f, storage::NewObject& out, ContentSource& content) {
  const auto frame = tfrecord::example_frame(f.sample.bytes(), tfrecord::size_value(f.sample));
  const std::string header = tfrecord::record_header(frame.data_bytes());
  std::string index;
  {
    StreamWriter w(out, buffer_, beside_);
    for (std::uint64_t i = 0; i < f.num_samples; ++i) {
      index += fmt::format("{} {}\n", w.position(), frame.record_bytes());
      w.append(header);
      Checksum crc{Checksum::Kind::crc32c};
      w.append(frame.prefix, &crc);
      w.append_content(frame.image_bytes, content, &crc);
      w.append(frame.suffix, &crc);
      const std::uint32_t masked = crc32c::mask(crc.value);
      char footer[4];
      for (int k = 0; k < 4; ++k) footer[k] = static_cast<char>((masked >> (8 * k)) & 0xff);
      w.append({footer, 4});
    }
    w.flush();
  }
  // The index is complete before the data file gets its final name (the generator's commit point).
  storage::NewFile index_file(tfrecord::index_path(f), {.remove_leftover = true, .sync = sync_});
  index_file.write_at(index.data(), index.size(), 0);
  index_file.commit();
}

void tfrecord::check_record(const char* r, const ExampleFrame& frame, const std::string& path, std::uint64_t sample,
                            std::uint64_t offset) {
  auto le32 = [](const char* p) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
  };
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(r[i]);
  const char* problem = nullptr;
  if (crc32c::mask(crc32c::value(r, 8)) != le32(r + 8)) problem = "bad length CRC";
  else if (length != frame.data_bytes()) problem = "another record length than the dataset's settings give";
  else if (std::memcmp(r + tfrecord::kHeaderBytes, frame.prefix.data(), frame.prefix.size()) != 0)
    problem = "not the tf.train.Example the dataset's settings give";
  else if (crc32c::mask(crc32c::value(r + tfrecord::kHeaderBytes, length)) != le32(r + tfrecord::kHeaderBytes + length))
    problem = "bad data CRC";
  if (problem)
    throw data_error(fmt::format("'{}': corrupted record {} at offset {}: {}", path, sample, offset, problem),
                     tfrecord::kRegenerate);
}

std::uint64_t DaliTfRecordReader::read(const SampleRequest& request) {
  const std::string& path = *request.path;
  const plan::SampleShape& shape = request.shape;
  const std::uint64_t sample = request.sample;
  const tfrecord::ExampleFrame& frame = frame_.of(shape);
  const std::uint64_t record = frame.record_bytes();
  if (buffer_.size() < record) buffer_.resize(record);
  file_.reopen(path);
  file_.pread_exact(buffer_.data(), record, sample * record);
  file_.close();
  // The record read must be the one the plan puts there: its length and framing, and both CRCs
  // (CRC-32C runs at several GB/s; DALI skips them, TensorFlow checks them).
  tfrecord::check_record(buffer_.data(), frame, path, sample, sample * record);
  return frame.image_bytes;
}

std::optional<std::string> validate_tfrecord(const plan::DataFile& f) {
  storage::File in = storage::File::open(f.path);
  const std::uint64_t size = in.size();
  util::Bytes data;
  std::string index_expected;
  std::uint64_t offset = 0, records = 0;
  while (offset < size) {
    char header[tfrecord::kHeaderBytes];
    if (offset + sizeof header > size) return fmt::format("record {} is cut short in its header", records);
    in.pread_exact(header, sizeof header, offset);
    std::uint64_t length = 0;
    std::uint32_t len_crc = 0;
    for (int i = 0; i < 8; ++i) length |= static_cast<std::uint64_t>(static_cast<unsigned char>(header[i])) << (8 * i);
    for (int i = 0; i < 4; ++i) len_crc |= static_cast<std::uint32_t>(static_cast<unsigned char>(header[8 + i])) << (8 * i);
    if (crc32c::mask(crc32c::value(header, 8)) != len_crc) return fmt::format("record {}: bad length CRC", records);
    const std::uint64_t record = tfrecord::kHeaderBytes + length + tfrecord::kFooterBytes;
    if (offset + record > size) return fmt::format("record {} runs past the end of the file", records);
    data.resize(length + tfrecord::kFooterBytes);
    in.pread_exact(data.data(), data.size(), offset + tfrecord::kHeaderBytes);
    std::uint32_t data_crc = 0;
    for (int i = 0; i < 4; ++i)
      data_crc |= static_cast<std::uint32_t>(static_cast<unsigned char>(data[length + i])) << (8 * i);
    if (crc32c::mask(crc32c::value(data.data(), length)) != data_crc) return fmt::format("record {}: bad data CRC", records);
    std::uint64_t image = 0;
    std::int64_t size_value = 0;
    if (!tfrecord::parse_example({data.data(), length}, image, size_value))
      return fmt::format("record {}: not a tf.train.Example with image and size features", records);
    if (image != f.sample.bytes())
      return fmt::format("record {}: image of {} bytes, expected {}", records, image, f.sample.bytes());
    index_expected += fmt::format("{} {}\n", offset, record);
    offset += record;
    ++records;
  }
  if (records != f.num_samples) return fmt::format("{} records, expected {}", records, f.num_samples);
  const auto index = storage::read_small_file(tfrecord::index_path(f));
  if (!index) return fmt::format("its DALI index {} is missing", tfrecord::index_path(f));
  if (*index != index_expected) return fmt::format("its DALI index {} does not match the records", tfrecord::index_path(f));
  return std::nullopt;
}

}  // namespace trainio::format
