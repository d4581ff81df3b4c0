#pragma once
// DLIO's NPZReaderS3 and NPYReaderS3, reading through s3torchconnector: a sample's open() is
// `s3_client.get_object(bucket, key).read()` — the whole object, with no HEAD first — parsed by
// np.load from memory. Under read_type: on_demand (DLIO's default) that is one whole-object read
// per sample, even when the file holds several.
//
// A whole-object read is what the CRT makes of it: a first ranged GET of one part (8 MiB) that
// also learns the object's size, then ranged GETs of the remaining parts, up to 8 in flight per
// object (the CRT's first scheduling pass; its client-wide limits can allow more). Where trainio
// deviates: each reader thread reads its own object's parts on its own connections (the CRT pools
// connections per process), and the bytes are counted, not kept for np.load, which trainio
// replaces by a check of the format's magic number and of the object holding at least its
// samples' bytes: a reader thread holds no object in memory.

#include <string>
#include <string_view>

#include "format/format.hpp"
#include "storage/s3/s3_client.hpp"

namespace trainio::format {

class S3ObjectReader final : public SampleReader {
 public:
  // `magic`: the bytes every object of the format begins with.
  S3ObjectReader(const storage::s3::Endpoint& endpoint, std::string_view magic, std::size_t part_bytes, int parts_in_flight);
  std::uint64_t read(const SampleRequest& r) override;

 private:
  storage::s3::Client client_;
  std::string magic_;
  std::string head_;  // the object's first bytes
  std::size_t part_bytes_;
  int parts_in_flight_;
};


}  // namespace trainio::format
