#pragma once
// A new S3 object, as a storage::NewObject: an object store's way of taking a name only when
// whole. A multipart upload whose parts go out as they fill and which commit() completes, so no
// reader ever sees part of the object under its key; dropped without commit(), it is aborted.
// As s3torchconnector's writer does, every object is a multipart upload, begun when the object is
// created, however small (its client never falls back to PutObject); with `Parts::put_when_small`
// an object of one part is a single PUT at commit() instead, as most other S3 clients send it.
//
// The first part is kept until commit(), and a full part until a write goes beyond it: writers
// patch headers whose checksum they know only later (zip's local headers: the first near the
// start, the last near the end), which a part already sent could not take. So part 1 goes out
// last, where s3torchconnector sends parts in order (DLIO serialises a whole file in memory first);
// the requests are the same. Parts go out as the CRT sends them, several at once (up to
// `parts_in_flight`): memory is the first part, the one being filled, and those in flight.
//
// S3 takes at most 10,000 parts: given the object's size, the part grows so that it needs no more
// (as the AWS SDKs grow it), and an object S3 cannot hold (over 5 TiB) is refused before any
// request. Without the size, a write that would need part 10,001 fails before it is sent.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "storage/output.hpp"
#include "storage/s3/s3_client.hpp"

namespace trainio::storage::s3 {

// S3's smallest part (but the last).
inline constexpr std::size_t kMinPartBytes = static_cast<std::size_t>(kMinPart);

class Upload final : public NewObject {
 public:
  enum class Parts { always_multipart, put_when_small };
  // `object_bytes`: the object's size when known (0: not known).
  Upload(Client& client, std::string bucket, std::string key, std::size_t part_bytes = kPartBytes,
         Parts parts = Parts::always_multipart, int parts_in_flight = kPartsInFlight, std::uint64_t object_bytes = 0);
  ~Upload() override;
  Upload(const Upload&) = delete;
  Upload& operator=(const Upload&) = delete;

  // Writes go front to back; bytes may be written again within the first part and the last part
  // written.
  void write_at(const void* data, std::size_t size, std::uint64_t offset) override;
  void commit() override;
  const std::string& local_path() const override { return no_path_; }

  // Parts sent so far (1 for a single PUT once committed).
  std::size_t parts_sent() const { return parts_sent_; }
  std::size_t part_bytes() const { return part_; }

 private:
  void send_pending();
  Client& client_;
  std::string bucket_, key_;
  std::size_t part_;
  Parts parts_;
  std::vector<char> first_;    // bytes [0, part_)
  std::vector<char> pending_;  // bytes [pending_start_, pending_start_ + pending_.size())
  std::uint64_t pending_start_;
  void collect_finished();
  std::string upload_;  // the multipart upload, once one is needed
  int parts_in_flight_;
  int next_part_ = 2;
  std::map<int, std::vector<char>> sending_;       // parts in flight, by number
  std::vector<std::pair<int, std::string>> etags_;  // of parts 2, 3, ... as they come back
  std::size_t parts_sent_ = 0;
  bool committed_ = false;
  const std::string no_path_;
};

}  // namespace trainio::storage::s3
