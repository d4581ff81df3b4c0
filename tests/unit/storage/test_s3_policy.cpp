// The S3 request policy (storage/s3/s3_policy.hpp), cell by cell: docs/s3.md prints the same table.

#include <catch2/catch.hpp>

#include <string>

#include "storage/s3/s3_client.hpp"
#include "storage/s3/s3_policy.hpp"
#include "storage/s3/s3_upload.hpp"
#include "util/error.hpp"

using namespace trainio;
using namespace trainio::storage;
using namespace trainio::storage::s3;

namespace {

std::string content_type(const Policy& p) { return p.content_type ? p.content_type : "-"; }

struct RequestCount : IoObserver {
  int seen = 0;
  void on_op(const OpEvent&) override {}
  void on_request(const RequestEvent&) override { ++seen; }
};

// The error a failed answer ends in.
Error failure(Request kind, int status, const std::string& code, int attempts = 1, bool ranged = false) {
  try {
    throw_failure(policy_of(kind, ranged), {.status = status, .code = code, .message = "m", .curl_error = "c",
                                            .untrusted = false, .attempts = attempts},
                  "s3://b/k", "b", "http://h");
  } catch (const Error& e) {
    return e;
  }
  FAIL("throw_failure returned");
  return internal_error("unreachable");
}

}  // namespace

TEST_CASE("S3 policy: every request kind has one row, with its method, content type and connection") {
  CHECK(policies().size() == static_cast<std::size_t>(kRequestKinds) + 1);  // GET twice: whole and ranged
  struct Row {
    Request kind;
    bool ranged;
    const char* method;
    const char* type;
    bool idempotent, fresh;
    Missing missing;
  };
  const Row rows[] = {
      {Request::head_bucket, false, "HEAD", "-", true, false, Missing::bucket},
      {Request::head, false, "HEAD", "-", true, false, Missing::object},
      {Request::get, false, "GET", "-", true, false, Missing::object},
      {Request::get, true, "GET", "-", true, false, Missing::object},
      {Request::put, false, "PUT", "application/octet-stream", true, false, Missing::bucket},
      {Request::delete_object, false, "DELETE", "-", true, false, Missing::done},
      {Request::create_upload, false, "POST", "application/octet-stream", false, true, Missing::bucket},
      {Request::upload_part, false, "PUT", "-", true, false, Missing::upload},
      {Request::complete_upload, false, "POST", "application/xml", false, false, Missing::confirm},
      {Request::abort_upload, false, "DELETE", "-", true, false, Missing::done},
      {Request::list_uploads, false, "GET", "-", true, false, Missing::bucket},
  };
  for (const Row& r : rows) {
    const Policy& p = policy_of(r.kind, r.ranged);
    INFO(p.name);
    CHECK(p.kind == r.kind);
    CHECK(p.ranged == r.ranged);
    CHECK(std::string(p.method) == r.method);
    CHECK(content_type(p) == r.type);
    CHECK(p.idempotent == r.idempotent);
    CHECK(p.fresh_connection == r.fresh);
    CHECK(p.on_404 == r.missing);
    CHECK(std::string(p.retry_note).size() > 5);
  }
  // A Range header only makes a GET ranged.
  CHECK(&policy_of(Request::head, true) == &policy_of(Request::head));
}

TEST_CASE("S3 policy: what is retried, and how long the client waits") {
  for (const int status : {0, 429, 500, 502, 503, 504}) CHECK(retryable(status, ""));
  CHECK(retryable(400, "RequestTimeout"));
  for (const int status : {200, 204, 206, 400, 403, 404, 409, 411, 416, 501}) CHECK_FALSE(retryable(status, ""));
  CHECK_FALSE(retryable(400, "InvalidArgument"));
  // A 200 whose body is an error document (CompleteMultipartUpload failing late).
  CHECK(retryable(200, "InternalError"));
  CHECK(retryable(200, "SlowDown"));
  CHECK_FALSE(retryable(200, "NoSuchUpload"));

  CHECK(retry_wait_ms(1, std::nullopt) == 100);
  CHECK(retry_wait_ms(2, std::nullopt) == 200);
  CHECK(retry_wait_ms(5, std::nullopt) == 1600);
  CHECK(retry_wait_ms(6, std::nullopt) == 2000);
  CHECK(retry_wait_ms(40, std::nullopt) == 2000);
  CHECK(retry_wait_ms(1, 3) == 3000);      // Retry-After, when longer
  CHECK(retry_wait_ms(6, 1) == 2000);      // the back-off, when longer
  CHECK(retry_wait_ms(1, 3600) == 20000);  // never more than 20 s
  CHECK(retry_wait_ms(1, 0) == 100);
}

TEST_CASE("S3 policy: what a 404, 409 or 416 means, on a first try and on a retry") {
  const auto verdict = [](Request kind, int status, const char* code, bool resent, bool ranged = false,
                          std::uint64_t from = 0) { return verdict_of(policy_of(kind, ranged), status, code, resent, from); };
  CHECK(verdict(Request::get, 200, "", false) == Verdict::ok);
  CHECK(verdict(Request::get, 206, "", true, true) == Verdict::ok);
  CHECK(verdict(Request::complete_upload, 200, "InternalError", true) == Verdict::error);  // after the last try
  // HEAD: 404 is an answer (no such object); GET: an error (the dataset is missing).
  CHECK(verdict(Request::head, 404, "", false) == Verdict::no_object);
  CHECK(verdict(Request::get, 404, "NoSuchKey", false) == Verdict::error);
  CHECK(verdict(Request::get, 404, "NoSuchKey", true) == Verdict::error);
  // A range from byte 0 that S3 cannot serve: the object is empty. From elsewhere: an error.
  CHECK(verdict(Request::get, 416, "InvalidRange", false, true, 0) == Verdict::empty);
  CHECK(verdict(Request::get, 416, "InvalidRange", false, true, 100) == Verdict::error);
  CHECK(verdict(Request::get, 416, "InvalidRange", false, false) == Verdict::error);
  // DELETE and Abort: gone already is done; a missing bucket is not.
  CHECK(verdict(Request::delete_object, 404, "NoSuchKey", true) == Verdict::done);
  CHECK(verdict(Request::abort_upload, 404, "NoSuchUpload", false) == Verdict::done);
  CHECK(verdict(Request::abort_upload, 404, "NoSuchUpload", true) == Verdict::done);
  CHECK(verdict(Request::delete_object, 404, "NoSuchBucket", true) == Verdict::error);
  // Complete: on a retry, NoSuchUpload or 409 may mean an earlier try completed it (a HEAD
  // decides); on the first try the upload is gone.
  CHECK(verdict(Request::complete_upload, 404, "NoSuchUpload", true) == Verdict::confirm);
  CHECK(verdict(Request::complete_upload, 409, "OperationAborted", true) == Verdict::confirm);
  CHECK(verdict(Request::complete_upload, 404, "NoSuchUpload", false) == Verdict::error);
  CHECK(verdict(Request::complete_upload, 409, "OperationAborted", false) == Verdict::error);
  CHECK(verdict(Request::complete_upload, 404, "NoSuchBucket", true) == Verdict::error);
  // UploadPart: the upload is gone, retry or not.
  CHECK(verdict(Request::upload_part, 404, "NoSuchUpload", true) == Verdict::error);
  // A 409 is a 404 only for Complete.
  CHECK(verdict(Request::put, 409, "OperationAborted", true) == Verdict::error);
  for (const Policy& p : policies())
    for (const int status : {400, 403, 500, 503}) CHECK(verdict_of(p, status, "", true, 0) == Verdict::error);
}

TEST_CASE("S3 policy: each failure is one error with its kind and fix") {
  const Error no_answer = failure(Request::get, 0, "", 3);
  CHECK(no_answer.kind() == ErrorKind::io);
  CHECK_THAT(no_answer.what(), Catch::Contains("no answer from http://h after 3 attempt(s)"));
  CHECK_THAT(no_answer.hint(), Catch::Contains("endpoint_url"));
  const Error denied = failure(Request::put, 403, "SignatureDoesNotMatch");
  CHECK(denied.kind() == ErrorKind::io);
  CHECK_THAT(denied.hint(), Catch::Contains("secret_access_key"));
  CHECK_THAT(failure(Request::head, 403, "RequestTimeTooSkewed").hint(), Catch::Contains("clock"));
  const Error missing = failure(Request::get, 404, "NoSuchKey");
  CHECK(missing.kind() == ErrorKind::data);
  CHECK_THAT(missing.hint(), Catch::Contains("generate the dataset first"));
  for (const Request kind : {Request::put, Request::create_upload, Request::head_bucket, Request::list_uploads}) {
    const Error bucket = failure(kind, 404, "NoSuchBucket");
    CHECK(bucket.kind() == ErrorKind::io);
    CHECK_THAT(bucket.hint(), Catch::Contains("create the bucket 'b'"));
  }
  CHECK_THAT(failure(Request::get, 404, "NoSuchBucket").hint(), Catch::Contains("create the bucket 'b'"));
  for (const Request kind : {Request::upload_part, Request::complete_upload}) {
    const Error gone = failure(kind, 404, "NoSuchUpload", 2);
    CHECK(gone.kind() == ErrorKind::io);
    CHECK_THAT(gone.hint(), Catch::Contains("lifecycle"));
  }
  const Error slow = failure(Request::upload_part, 503, "SlowDown", 5);
  CHECK_THAT(slow.what(), Catch::Contains("HTTP 503 SlowDown (m) after 5 attempts"));
  CHECK_THAT(slow.hint(), Catch::Contains("s3_max_attempts"));
  CHECK_THAT(failure(Request::complete_upload, 200, "InternalError", 5).what(), Catch::Contains("after 5 attempts"));
  const Error shorter = failure(Request::get, 416, "InvalidRange", 1, true);
  CHECK(shorter.kind() == ErrorKind::data);
  CHECK(failure(Request::complete_upload, 400, "EntityTooSmall").kind() == ErrorKind::internal);
  CHECK_THAT(failure(Request::put, 409, "OperationAborted").hint(), Catch::Contains("another client"));
  CHECK_THAT(failure(Request::put, 400, "InvalidArgument").hint(), Catch::Contains("answer above"));
}

TEST_CASE("S3 policy: parts grow so that no object needs more than 10,000; over 5 TiB is refused") {
  constexpr std::uint64_t mib = 1u << 20, gib = mib << 10;
  CHECK(part_bytes_for(0, 8 * mib) == 8 * mib);  // size unknown: as configured
  CHECK(part_bytes_for(1, 8 * mib) == 8 * mib);
  CHECK(part_bytes_for(80'000 * mib, 8 * mib) == 8 * mib);  // exactly 10,000 parts
  CHECK(part_bytes_for(80'000 * mib + 1, 8 * mib) == 9 * mib);
  CHECK(part_bytes_for(100 * gib, 8 * mib) == 11 * mib);   // 10.24 MiB, in whole MiB
  CHECK(part_bytes_for(kMaxObject, 8 * mib) == 525 * mib);
  for (const std::uint64_t size : {80'000 * mib + 1, 100 * gib, 810 * gib, kMaxObject}) {
    const std::uint64_t part = part_bytes_for(size, 8 * mib);
    CHECK((size + part - 1) / part <= kMaxParts);
    CHECK(part % mib == 0);
    CHECK(part <= kMaxPart);
  }
  CHECK_NOTHROW(check_object_size(kMaxObject, "s3://b/k"));
  try {
    check_object_size(kMaxObject + 1, "s3://b/ck/model.pt");
    FAIL("an object over 5 TiB was accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::config);
    CHECK_THAT(e.what(), Catch::Contains("s3://b/ck/model.pt") && Catch::Contains("5 TiB"));
    CHECK_THAT(e.hint(), Catch::Contains("more ranks"));
  }
}

TEST_CASE("S3 policy: an upload takes its part size from the object's size, and refuses one S3 cannot hold before any request") {
  Endpoint e;
  e.url = "http://127.0.0.1:9";  // nothing listens: no request may be sent
  Client client(e);
  RequestCount requests;
  const ScopedObserver observing(&requests);
  constexpr std::uint64_t gib = 1ull << 30;
  const Upload big(client, "b", "k", kPartBytes, Upload::Parts::put_when_small, 8, 100 * gib);
  CHECK(big.part_bytes() == 11u << 20);
  const Upload small(client, "b", "k", kPartBytes, Upload::Parts::put_when_small, 8, 1000);
  CHECK(small.part_bytes() == kPartBytes);
  const Upload tiny_parts(client, "b", "k", 1000, Upload::Parts::put_when_small, 8, 0);
  CHECK(tiny_parts.part_bytes() == kMinPartBytes);  // S3's smallest part
  CHECK_THROWS_AS(Upload(client, "b", "k", kPartBytes, Upload::Parts::always_multipart, 8, 6ull << 40), Error);
  CHECK(requests.seen == 0);
}
