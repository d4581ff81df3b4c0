#include "storage/s3/s3_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "util/error.hpp"

namespace trainio::storage::s3 {

namespace {

// Every row is a cell-by-cell promise: tests/unit/storage/test_s3_policy.cpp checks each, and
// docs/s3.md prints the table.
constexpr std::array<Policy, 11> kPolicies{{
    {Request::head_bucket, false, "HeadBucket", "HEAD", "", nullptr, true, false, Missing::bucket, "sent again"},
    {Request::head, false, "HeadObject", "HEAD", "", nullptr, true, false, Missing::object, "sent again"},
    {Request::get, false, "GetObject", "GET", "", nullptr, true, false, Missing::object,
     "sent again; the body is taken from its first byte again"},
    {Request::get, true, "GetObject (ranged)", "GET", "Range: bytes=a-b", nullptr, true, false, Missing::object,
     "sent again; a 416 InvalidRange for a range from byte 0 means the object is empty (S3 cannot serve any range "
     "of 0 bytes): read as empty"},
    {Request::put, false, "PutObject", "PUT", "", "application/octet-stream", true, false, Missing::bucket,
     "sent again whole"},
    {Request::delete_object, false, "DeleteObject", "DELETE", "", nullptr, true, false, Missing::done,
     "sent again; a 404 but NoSuchBucket means the object is gone: done"},
    {Request::create_upload, false, "CreateMultipartUpload", "POST", "?uploads", "application/octet-stream", false, true,
     Missing::bucket,
     "sent again on a new connection; once it succeeds after a retry, the key's other uploads in progress are aborted "
     "(ListMultipartUploads, AbortMultipartUpload): an earlier try may have begun one that nobody would finish"},
    {Request::upload_part, false, "UploadPart", "PUT", "?partNumber=N&uploadId=U", nullptr, true, false,
     Missing::upload, "sent again; the part replaces itself. A 404 NoSuchUpload: the upload was aborted (a lifecycle "
     "rule, another client): an error"},
    {Request::complete_upload, false, "CompleteMultipartUpload", "POST", "?uploadId=U", "application/xml", false, false,
     Missing::confirm,
     "sent again (also after a 200 whose body is an error document, as S3 may answer); a 404 NoSuchUpload or a 409 "
     "on a retry means an earlier try may have completed it: a HEAD decides (the object's size, and its multipart "
     "ETag where the server gives one)"},
    {Request::abort_upload, false, "AbortMultipartUpload", "DELETE", "?uploadId=U", nullptr, true, false, Missing::done,
     "sent again; a 404 NoSuchUpload means the upload is gone already: done"},
    {Request::list_uploads, false, "ListMultipartUploads", "GET", "?uploads&prefix=K (on the bucket)", nullptr, true,
     false, Missing::bucket, "sent again"},
}};

std::string object_hint(Missing m, const std::string& bucket) {
  switch (m) {
    case Missing::bucket:
      return fmt::format("create the bucket '{}', or point dataset.data_folder at a bucket that exists (s3://<bucket>/<prefix>)",
                         bucket);
    case Missing::upload:
    case Missing::confirm:
      return "a lifecycle rule (AbortIncompleteMultipartUpload) or another client aborted the upload: give this run a "
             "prefix no other client writes, and check the bucket's lifecycle rules";
    default:
      return "generate the dataset first (workflow.generate_data=True), or check dataset.data_folder";
  }
}

}  // namespace

std::span<const Policy> policies() { return kPolicies; }

const Policy& policy_of(Request kind, bool ranged) {
  for (const Policy& p : kPolicies)
    if (p.kind == kind && p.ranged == (ranged && kind == Request::get)) return p;
  throw internal_error(fmt::format("no S3 request policy for {}", request_name(kind)));
}

bool retryable(int status, std::string_view code) {
  if (status >= 200 && status < 300)  // a 200 whose body is an error document
    return code == "InternalError" || code == "SlowDown" || code == "ServiceUnavailable";
  return status == 0 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504 ||
         (status == 400 && code == "RequestTimeout");
}

std::int64_t retry_wait_ms(int tries, std::optional<int> retry_after_s) {
  const std::int64_t backoff = std::min(2000, 100 << std::clamp(tries - 1, 0, 5));
  if (!retry_after_s || *retry_after_s <= 0) return backoff;
  return std::max<std::int64_t>(backoff, std::min<std::int64_t>(20'000, std::int64_t{*retry_after_s} * 1000));
}

Verdict verdict_of(const Policy& p, int status, std::string_view code, bool resent, std::uint64_t range_start) {
  if (status >= 200 && status < 300) return code.empty() ? Verdict::ok : Verdict::error;
  if (status == 416 && p.ranged && range_start == 0) return Verdict::empty;
  const bool gone = status == 404 || (status == 409 && p.on_404 == Missing::confirm);
  if (!gone || code == "NoSuchBucket") return Verdict::error;
  switch (p.on_404) {
    case Missing::object: return p.kind == Request::head ? Verdict::no_object : Verdict::error;
    case Missing::done: return Verdict::done;
    case Missing::confirm: return resent ? Verdict::confirm : Verdict::error;
    default: return Verdict::error;
  }
}

void throw_failure(const Policy& p, const Failure& f, const std::string& object, const std::string& bucket,
                   const std::string& endpoint_url) {
  if (f.untrusted)
    throw io_error(fmt::format("S3 {} of '{}': the TLS certificate of {} is not trusted ({})", request_name(p.kind), object, endpoint_url,
                               f.curl_error),
                   "set AWS_CA_BUNDLE to the certificate of the authority that signed the endpoint's certificate");
  if (f.status == 0)
    throw io_error(fmt::format("S3 {} of '{}': no answer from {} after {} attempt(s): {}", request_name(p.kind), object, endpoint_url,
                               f.attempts, f.curl_error),
                   "check that the S3 server is running and reachable at storage.storage_options.endpoint_url");
  const std::string what = fmt::format("S3 {} of '{}' failed: HTTP {}{}{}", request_name(p.kind), object, f.status,
                                       f.code.empty() ? "" : " " + f.code, f.message.empty() ? "" : " (" + f.message + ")");
  if (f.code == "RequestTimeTooSkewed")
    throw io_error(what, "this machine's clock is more than 15 minutes off the server's: set it right (NTP)");
  if (f.status == 403 || f.code == "InvalidAccessKeyId" || f.code == "SignatureDoesNotMatch")
    throw io_error(what, "check storage.storage_options.access_key_id and secret_access_key (or AWS_ACCESS_KEY_ID and "
                         "AWS_SECRET_ACCESS_KEY) and the region");
  if (f.code == "NoSuchBucket" || (f.status == 404 && p.on_404 == Missing::bucket))
    throw io_error(what, object_hint(Missing::bucket, bucket));
  if (f.status == 404 || (f.status == 409 && p.on_404 == Missing::confirm)) {
    if (p.on_404 == Missing::object) throw data_error(what, object_hint(Missing::object, bucket));
    throw io_error(what, object_hint(p.on_404, bucket));
  }
  if (f.status == 416)
    throw data_error(what, "the object is shorter than the plan says: the bucket holds another dataset; generate this "
                           "one again, or point dataset.data_folder elsewhere");
  if (f.code == "EntityTooSmall" || f.code == "InvalidPart" || f.code == "InvalidPartOrder" || f.code == "MalformedXML")
    throw internal_error(what + ": trainio sent a multipart upload S3 refuses (a bug: please report it)");
  if (retryable(f.status, f.code) || (f.status >= 200 && f.status < 300))
    throw io_error(what + fmt::format(" after {} attempts", f.attempts),
                   "the S3 server kept failing: see its logs, or allow more tries with storage.storage_options.s3_max_attempts");
  if (f.status == 409)
    throw io_error(what, "another client is changing the same object: give this run a prefix no other client writes");
  throw io_error(what, "see the S3 server's answer above");
}

std::uint64_t part_bytes_for(std::uint64_t object_bytes, std::uint64_t configured) {
  if (object_bytes <= configured * kMaxParts) return configured;
  constexpr std::uint64_t mib = 1u << 20;
  const std::uint64_t least = (object_bytes + kMaxParts - 1) / kMaxParts;
  return std::min(kMaxPart, (least + mib - 1) / mib * mib);
}

void check_object_size(std::uint64_t object_bytes, const std::string& object) {
  if (object_bytes > kMaxObject)
    throw config_error(fmt::format("S3 object '{}' would hold {} bytes, more than S3's largest object (5 TiB, "
                                   "10,000 parts of at most 5 GiB)", object, object_bytes),
                       "spread the checkpoint over more ranks (more ranks, model.parallelism, or zero_stage), or write "
                       "it to a file system");
}

}  // namespace trainio::storage::s3
