#include "format/s3_object_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace trainio::format {

S3ObjectReader::S3ObjectReader(const storage::s3::Endpoint& endpoint, std::string_view magic, std::size_t part_bytes)
    : client_(endpoint), magic_(magic), part_(part_bytes) {}

std::uint64_t S3ObjectReader::read(const SampleRequest& r) {
  const storage::s3::ObjectPath object = storage::s3::parse_object_path(*r.path);
  const auto first = client_.get_part(object.bucket, object.key, {part_.data(), part_.size()}, 0);
  if (first.received < magic_.size() || std::memcmp(part_.data(), magic_.data(), magic_.size()) != 0)
    throw data_error(fmt::format("S3 object '{}' does not begin as its format's files do", *r.path),
                     "the bucket holds other objects under the dataset's names: generate the dataset again");
  const std::uint64_t samples_bytes = r.samples_in_file * r.shape.bytes();
  if (first.object_size < samples_bytes)
    throw data_error(fmt::format("S3 object '{}' holds {} bytes, fewer than its {} samples take ({})", *r.path,
                                 first.object_size, r.samples_in_file, samples_bytes),
                     "the object was cut short or replaced: generate the dataset again");
  for (std::uint64_t at = first.received; at < first.object_size; at += part_.size()) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(part_.size(), first.object_size - at));
    client_.get_part(object.bucket, object.key, {part_.data(), n}, at);
  }
  return r.shape.bytes();
}

}  // namespace trainio::format
