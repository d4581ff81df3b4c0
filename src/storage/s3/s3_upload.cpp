#include "storage/s3/s3_upload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace trainio::storage::s3 {

namespace {

std::size_t part_size(std::size_t configured, std::uint64_t object_bytes, const std::string& bucket, const std::string& key) {
  check_object_size(object_bytes, fmt::format("s3://{}/{}", bucket, key));  // before any request
  return static_cast<std::size_t>(part_bytes_for(object_bytes, std::max(configured, kMinPartBytes)));
}

}  // namespace

Upload::Upload(Client& client, std::string bucket, std::string key, std::size_t part_bytes, Parts parts,
               int parts_in_flight, std::uint64_t object_bytes)
    : client_(client), bucket_(std::move(bucket)), key_(std::move(key)), part_(part_size(part_bytes, object_bytes, bucket_, key_)),
      parts_(parts), pending_start_(part_), parts_in_flight_(std::max(1, parts_in_flight)) {
  first_.reserve(part_);
  if (parts_ == Parts::always_multipart) upload_ = client_.create_upload(bucket_, key_);
}

Upload::~Upload() {
  if (committed_ || upload_.empty()) return;  // nothing of a single PUT was sent before commit()
  if (!sending_.empty()) client_.cancel_in_flight();  // their bodies go with this object
  try {
    client_.abort_upload(bucket_, key_, upload_);
  } catch (...) {
    // The error that dropped us is the one to report; S3 removes unfinished uploads by lifecycle rule.
  }
}

void Upload::write_at(const void* data, std::size_t size, std::uint64_t offset) {
  const char* in = static_cast<const char*>(data);
  while (size > 0) {
    std::vector<char>* into;
    std::size_t at, room;
    if (offset < part_) {
      into = &first_;
      at = static_cast<std::size_t>(offset);
      room = part_ - at;
    } else if (offset >= pending_start_) {
      // A full part goes out only once a write goes beyond it, so that the last part written can
      // still take a patch (a zip's last local header, known once its data is).
      if (offset >= pending_start_ + part_ && pending_.size() == part_) send_pending();
      into = &pending_;
      at = static_cast<std::size_t>(offset - pending_start_);
      if (at >= part_)
        throw internal_error(fmt::format("S3 object '{}': a write at {} skips a whole part", key_, offset));
      room = part_ - at;
    } else {
      throw internal_error(fmt::format("S3 object '{}': bytes at {} were uploaded already (writers may rewrite only the "
                                       "first part and the last one written)", key_, offset));
    }
    const std::size_t n = std::min(size, room);
    if (into->size() < at + n) into->resize(at + n);
    std::memcpy(into->data() + at, in, n);
    in += n;
    offset += n;
    size -= n;
  }
}

void Upload::send_pending() {
  if (static_cast<std::uint64_t>(next_part_) > kMaxParts)
    throw internal_error(fmt::format("S3 object 's3://{}/{}' would need more than {} parts of {} bytes, S3's limit: its "
                                     "upload was not given the object's size (a bug: please report it)",
                                     bucket_, key_, kMaxParts, part_));
  if (upload_.empty()) upload_ = client_.create_upload(bucket_, key_);
  const int part = next_part_++;
  std::vector<char>& body = sending_[part];
  body.swap(pending_);  // the part's bytes stay here until its answer; pending_ takes a free buffer
  pending_start_ += body.size();
  pending_.clear();
  client_.upload_part_async(bucket_, key_, upload_, part, body, pending_start_ - body.size(), parts_in_flight_, etags_);
  ++parts_sent_;
  collect_finished();
}

void Upload::collect_finished() {
  for (const auto& [part, etag] : etags_) sending_.erase(part);
}

void Upload::commit() {
  if (parts_ == Parts::put_when_small && upload_.empty() && pending_.empty()) {
    client_.put(bucket_, key_, first_);
    parts_sent_ = 1;
  } else {
    if ((!pending_.empty() || next_part_ > 2) && first_.size() != part_)
      throw internal_error(fmt::format("S3 object '{}': its first part was not written whole", key_));
    if (!pending_.empty()) send_pending();
    client_.wait_parts(etags_);
    collect_finished();
    etags_.emplace_back(1, client_.upload_part(bucket_, key_, upload_, 1, first_, 0));
    ++parts_sent_;
    std::sort(etags_.begin(), etags_.end());
    std::vector<std::string> etags;
    for (const auto& [part, etag] : etags_) etags.push_back(etag);
    // Every byte is in a part: the object ends where the last part sent ends (or part 1 does).
    client_.complete_upload(bucket_, key_, upload_, etags, next_part_ > 2 ? pending_start_ : first_.size());
  }
  committed_ = true;
}

}  // namespace trainio::storage::s3
