#pragma once
// What trainio's S3 client sends and does for each kind of request: its method, content type and
// connection, whether sending it twice is harmless, what it retries and how long it waits, what a
// 404 or 409 means (on a first try and on a retry), and the fix its errors print. One table, read
// by the client (s3_client.cpp) and stated in docs/s3.md; pure functions, tested cell by cell.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "storage/io_observer.hpp"

namespace trainio::storage::s3 {

// S3's limits: parts of a multipart upload, the smallest part but the last, the largest part and
// the largest object.
inline constexpr std::uint64_t kMaxParts = 10'000;
inline constexpr std::uint64_t kMinPart = 5ull << 20;
inline constexpr std::uint64_t kMaxPart = 5ull << 30;
inline constexpr std::uint64_t kMaxObject = 5ull << 40;

// What a 404 (or, for CompleteMultipartUpload, a 409) answer means for a request.
enum class Missing : std::uint8_t {
  object,      // the object is not there: HEAD answers "no such object"; GET is a data error
  bucket,      // only the bucket can be missing
  upload,      // the upload is gone (aborted by a lifecycle rule or another client): an error
  done,        // on a retry: an earlier try did it (DELETE, AbortMultipartUpload): success
  confirm,     // on a retry: an earlier try may have completed it: a HEAD decides
};

struct Policy {
  Request kind;
  bool ranged;               // a GET with a Range header
  const char* name;          // as in the S3 API
  const char* method;
  const char* query;         // what names the operation besides the method ("" for none)
  const char* content_type;  // sent and signed; nullptr: no Content-Type header
  // Sending it twice leaves what sending it once does. Of those that are not, the client learns
  // of every resend: CreateMultipartUpload goes out on a new connection (on a kept one, libcurl
  // resends a request whose connection died before any answer, without a word), and a body is
  // read through a callback that cannot rewind (libcurl then fails instead of resending).
  bool idempotent;
  bool fresh_connection;
  Missing on_404;
  const char* retry_note;  // what a retry does beyond sending again (docs/s3.md)
};

// Every request kind's policy, in the order docs/s3.md lists them.
std::span<const Policy> policies();
const Policy& policy_of(Request kind, bool ranged = false);

// Whether an answer may succeed when sent again: no answer at all (a reset, a timeout, a lost
// answer), 500, 502, 503, 504, 429, 400 RequestTimeout (S3's "your socket was idle too long"),
// and a 200 whose body is an InternalError or SlowDown document (CompleteMultipartUpload's way).
bool retryable(int status, std::string_view code);
// The wait before try `tries + 1`: exponential back-off (0.1 s, 0.2 s, ... 2 s), or the server's
// Retry-After when it asks for longer (at most 20 s, the AWS SDKs' longest wait).
std::int64_t retry_wait_ms(int tries, std::optional<int> retry_after_s);

// What the client makes of a final answer.
enum class Verdict : std::uint8_t {
  ok,          // 2xx
  no_object,   // HEAD's 404: an answer (size_of returns nothing)
  empty,       // a ranged GET from byte 0 answered 416: the object is there and empty
  done,        // a 404 that means an earlier try did it
  confirm,     // CompleteMultipartUpload: a HEAD decides whether an earlier try completed it
  error,       // throw error_of()
};
// `resent`: the request may have reached the server before (a retry).
Verdict verdict_of(const Policy& p, int status, std::string_view code, bool resent, std::uint64_t range_start);

// The error a failed answer ends the request with: its kind (io, data) and the fix.
struct Failure {
  int status = 0;           // 0: no answer
  std::string code, message;
  std::string curl_error;   // when there was no answer
  bool untrusted = false;   // no answer because the TLS certificate is not trusted
  int attempts = 1;
};
[[noreturn]] void throw_failure(const Policy& p, const Failure& f, const std::string& object, const std::string& bucket,
                                const std::string& endpoint_url);

// The part size of an upload of `object_bytes` (0: not known): `configured`, grown so that no
// object needs more than 10,000 parts (as the AWS SDKs grow it), in whole MiB.
std::uint64_t part_bytes_for(std::uint64_t object_bytes, std::uint64_t configured);
// Throws a config error when an object of `object_bytes` cannot be stored in S3 (over 5 TiB).
void check_object_size(std::uint64_t object_bytes, const std::string& object);

}  // namespace trainio::storage::s3
