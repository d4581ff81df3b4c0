#pragma once
// DLIO's NPZReaderS3 and NPYReaderS3, reading through s3torchconnector: a sample's open() is
// `s3_client.get_object(bucket, key).read()` — the whole object, with no HEAD first — parsed by
// np.load from memory. Under read_type: on_demand (DLIO's default) that is one whole-object read
// per sample, even when the file holds several.
//
// A whole-object read is what the CRT makes of it: a first ranged GET of one part (8 MiB) that
// also learns the object's size, then a ranged GET per remaining part. Where trainio deviates:
// the remaining parts go one after another on the thread's connection (the CRT keeps up to 8 of
// them in flight per object), and the bytes pass through one part-sized buffer instead of being
// kept for np.load, which trainio replaces by a check of the format's magic number and of the
// object holding at least its samples' bytes.

#include <string>
#include <string_view>

#include "format/format.hpp"
#include "storage/s3_client.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

class S3ObjectReader final : public SampleReader {
 public:
  // `magic`: the bytes every object of the format begins with.
  S3ObjectReader(const storage::s3::Endpoint& endpoint, std::string_view magic, std::size_t part_bytes);
  std::uint64_t read(const SampleRequest& r) override;

 private:
  storage::s3::Client client_;
  std::string magic_;
  util::Bytes part_;
};

// s3torchconnector's part size (8 MiB), for reads and writes.
inline constexpr std::size_t kS3PartBytes = 8u << 20;

}  // namespace trainio::format
