#include "format/s3_object_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace trainio::format {

S3ObjectReader::S3ObjectReader(const storage::s3::Endpoint& endpoint, std::string_view magic, std::size_t part_bytes,
                               int parts_in_flight)
    : client_(endpoint), magic_(magic), head_(magic.size(), '\0'), part_bytes_(part_bytes), parts_in_flight_(parts_in_flight) {}

std::uint64_t S3ObjectReader::read(const SampleRequest& r) {
  const storage::s3::ObjectPath object = storage::s3::parse_object_path(*r.path);
  std::fill(head_.begin(), head_.end(), '\0');
  const std::uint64_t size = client_.read_object(object.bucket, object.key, {head_.data(), head_.size()}, part_bytes_, parts_in_flight_);
  if (head_ != magic_)
    throw data_error(fmt::format("S3 object '{}' does not begin as its format's files do", *r.path),
                     "the bucket holds other objects under the dataset's names: generate the dataset again");
  const std::uint64_t samples_bytes = r.samples_in_file * r.shape.bytes();
  if (size < samples_bytes)
    throw data_error(fmt::format("S3 object '{}' holds {} bytes, fewer than its {} samples take ({})", *r.path, size,
                                 r.samples_in_file, samples_bytes),
                     "the object was cut short or replaced: generate the dataset again");
  return r.shape.bytes();
}

}  // namespace trainio::format
