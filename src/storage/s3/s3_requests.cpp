// The S3 client's requests (s3_client.hpp), each made as its row of the request policy says
// (s3_policy.hpp); s3_client.cpp moves the bytes.
#include <fmt/format.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "storage/s3/s3_call.hpp"
#include "storage/s3/s3_client.hpp"
#include "util/error.hpp"

namespace trainio::storage::s3 {

namespace {

std::string unquoted(std::string_view etag) {
  while (!etag.empty() && etag.front() == '"') etag.remove_prefix(1);
  while (!etag.empty() && etag.back() == '"') etag.remove_suffix(1);
  return std::string(etag);
}

std::string xml_unescaped(std::string text) {
  for (const auto& [entity, ch] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}})
    for (auto at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1)) text.replace(at, std::string_view(entity).size(), ch);
  return text;
}

bool is_md5_hex(const std::string& s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

// S3's ETag of a multipart object: the MD5 of its parts' MD5s, then "-<parts>"; "" when a
// part's ETag is not an MD5 (encrypted objects, other servers).
std::string multipart_etag(const std::vector<std::string>& etags) {
  std::string digests;
  for (const auto& e : etags) {
    const std::string hex = unquoted(e);
    if (!is_md5_hex(hex)) return "";
    for (std::size_t i = 0; i < 32; i += 2) digests += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!EVP_Digest(digests.data(), digests.size(), md, &size, EVP_md5(), nullptr)) return "";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) out += fmt::format("{:02x}", md[i]);
  return fmt::format("{}-{}", out, etags.size());
}

}  // namespace

void Client::check_bucket(const std::string& bucket) {
  Call call(Request::head_bucket, "HEAD", bucket);
  perform(call);
}

std::optional<std::uint64_t> Client::size_of(const std::string& bucket, const std::string& key) {
  Call call(Request::head, "HEAD", bucket, &key);
  const Answer a = perform(call);
  if (a.verdict == Verdict::no_object) return std::nullopt;
  return a.content_length;
}

std::uint64_t Client::get(const std::string& bucket, const std::string& key, std::span<char> dest, std::uint64_t offset,
                          std::uint64_t length) {
  Call call(Request::get, "GET", bucket, &key);
  if (length > 0) {
    call.set_range(offset, length);
    dest = dest.first(std::min<std::size_t>(dest.size(), length));
  }
  call.dest = dest;
  const Answer a = perform(call);
  return a.verdict == Verdict::empty ? 0 : a.received;
}

std::uint64_t Client::get_counted(const std::string& bucket, const std::string& key, std::uint64_t offset,
                                  std::uint64_t length) {
  Call call(Request::get, "GET", bucket, &key);
  call.set_range(offset, length);
  call.discard = true;
  const Answer a = perform(call);
  return a.verdict == Verdict::empty ? 0 : a.received;
}

std::uint64_t Client::read_object(const std::string& bucket, const std::string& key, std::span<char> head,
                                  std::size_t part_bytes, int in_flight) {
  auto part_call = [&](std::uint64_t offset, std::uint64_t size) {
    auto call = std::make_unique<Call>(Request::get, "GET", bucket, &key);
    call->set_range(offset, size);
    call->discard = true;
    return call;
  };
  const auto first = part_call(0, part_bytes);
  first->dest = head;
  const Answer a = perform(*first);
  // A range of an empty object is refused (416): it is there, and empty.
  if (a.verdict == Verdict::empty) return 0;
  const std::uint64_t size = a.status == 206 ? a.object_size : a.received;
  // The remaining parts, up to in_flight at once, each on its own handle (its own connection).
  try {
    const auto nothing = [](Lane&) {};
    for (std::uint64_t offset = part_bytes; offset < size; offset += part_bytes)
      start(free_lane(static_cast<std::size_t>(in_flight), nothing), part_call(offset, std::min<std::uint64_t>(part_bytes, size - offset)), 1);
    wait_all(nothing);
  } catch (...) {
    abandon_all();
    throw;
  }
  return size;
}

void Client::upload_part_async(const std::string& bucket, const std::string& key, const std::string& upload, int part,
                               std::span<const char> body, std::uint64_t offset, int in_flight,
                               std::vector<std::pair<int, std::string>>& etags) {
  const auto collect = [&](Lane& lane) { etags.emplace_back(lane.call->part, lane.t.answer.etag); };
  try {
    auto call = std::make_unique<Call>(Request::upload_part, "PUT", bucket, &key);
    call->query = {{"partNumber", std::to_string(part)}, {"uploadId", upload}};
    call->body = body;
    call->offset = offset;
    call->part = part;
    start(free_lane(static_cast<std::size_t>(in_flight), collect), std::move(call), 1);
  } catch (...) {
    abandon_all();
    throw;
  }
}

void Client::wait_parts(std::vector<std::pair<int, std::string>>& etags) {
  try {
    wait_all([&](Lane& lane) { etags.emplace_back(lane.call->part, lane.t.answer.etag); });
  } catch (...) {
    abandon_all();
    throw;
  }
}

void Client::put(const std::string& bucket, const std::string& key, std::span<const char> body) {
  Call call(Request::put, "PUT", bucket, &key);
  call.body = body;
  perform(call);
}

void Client::remove(const std::string& bucket, const std::string& key) {
  Call call(Request::delete_object, "DELETE", bucket, &key);
  perform(call);
}

std::string Client::create_upload(const std::string& bucket, const std::string& key) {
  Call call(Request::create_upload, "POST", bucket, &key);
  call.query = {{"uploads", ""}};
  const Answer a = perform(call);
  const std::string id = xml_value(a.text, "UploadId");
  if (id.empty()) throw io_error(fmt::format("S3 CreateMultipartUpload of 's3://{}/{}' answered without an UploadId", bucket, key),
                                 "the server at storage.storage_options.endpoint_url does not support multipart uploads");
  if (a.attempts > 1) {
    // An earlier try may have begun an upload whose id never came back: nobody would finish it,
    // and S3 keeps (and bills) its parts. Only this rank writes this key, so any other is one.
    try {
      for (const auto& other : uploads_of(bucket, key))
        if (other != id) abort_upload(bucket, key, other);
    } catch (const Error& e) {
      spdlog::warn("S3 object 's3://{}/{}': CreateMultipartUpload needed {} tries, and the uploads an earlier try may "
                   "have begun could not be looked for ({}): a lifecycle rule (AbortIncompleteMultipartUpload) removes "
                   "them", bucket, key, a.attempts, e.what());
    }
  }
  return id;
}

std::vector<std::string> Client::uploads_of(const std::string& bucket, const std::string& key) {
  Call call(Request::list_uploads, "GET", bucket);
  call.query = {{"uploads", ""}, {"prefix", key}};
  const Answer a = perform(call);
  std::vector<std::string> ids;
  for (auto at = a.text.find("<Upload>"); at != std::string::npos; at = a.text.find("<Upload>", at + 1))
    if (xml_unescaped(xml_value(a.text, "Key", at)) == key) ids.push_back(xml_value(a.text, "UploadId", at));
  return ids;
}

std::string Client::upload_part(const std::string& bucket, const std::string& key, const std::string& upload, int part,
                                std::span<const char> body, std::uint64_t offset) {
  Call call(Request::upload_part, "PUT", bucket, &key);
  call.query = {{"partNumber", std::to_string(part)}, {"uploadId", upload}};
  call.body = body;
  call.offset = offset;
  return perform(call).etag;
}

void Client::complete_upload(const std::string& bucket, const std::string& key, const std::string& upload,
                             const std::vector<std::string>& etags, std::uint64_t object_bytes) {
  std::string xml = "<CompleteMultipartUpload>";
  for (std::size_t i = 0; i < etags.size(); ++i)
    xml += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1, etags[i]);
  xml += "</CompleteMultipartUpload>";
  Call call(Request::complete_upload, "POST", bucket, &key);
  call.query = {{"uploadId", upload}};
  call.body = {xml.data(), xml.size()};
  const Answer a = perform(call);
  if (a.verdict != Verdict::confirm) return;
  // The retry found the upload gone: an earlier try completed it if the key holds this upload's
  // object (its size, and its multipart ETag where the server gives S3's kind).
  Call head(Request::head, "HEAD", bucket, &key);
  const Answer h = perform(head);
  const std::string expected = multipart_etag(etags), found = unquoted(h.etag);
  const bool etag_known = !expected.empty() && found.find('-') != std::string::npos;
  if (h.verdict == Verdict::ok && h.content_length == object_bytes && (!etag_known || found == expected)) return;
  const std::string seen = h.verdict != Verdict::ok ? "no object"
                           : h.content_length != object_bytes
                               ? fmt::format("an object of {} bytes, not the {} uploaded", h.content_length, object_bytes)
                               : fmt::format("another object (ETag {}, not {})", found, expected);
  throw_failure(call.policy(),
                {.status = a.status, .code = a.code,
                 .message = fmt::format("{}; a HEAD of the key then found {}", xml_value(a.text, "Message"), seen),
                 .curl_error = {}, .untrusted = false, .attempts = a.attempts},
                fmt::format("s3://{}/{}", bucket, key), bucket, hosts_[call.endpoint].url);
}

void Client::abort_upload(const std::string& bucket, const std::string& key, const std::string& upload) {
  Call call(Request::abort_upload, "DELETE", bucket, &key);
  call.query = {{"uploadId", upload}};
  perform(call);
}

}  // namespace trainio::storage::s3
