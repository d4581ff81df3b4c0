#pragma once
// Inside the S3 client (s3_client.cpp moves the bytes, s3_requests.cpp makes the requests): one
// request with what its transfer needs, and what came back. Not for other includes: it brings
// libcurl's header.

#include <curl/curl.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "storage/s3/s3_client.hpp"
#include "storage/s3/s3_policy.hpp"

namespace trainio::storage::s3 {

struct Client::Call {
  Call(Request k, const char* m, const std::string& b, const std::string* o = nullptr) : kind(k), method(m), bucket(&b), key(o) {}
  Request kind;
  const char* method;
  const std::string* bucket;
  const std::string* key;  // nullptr for requests on the bucket
  bool ranged = false;     // a GET with a Range header
  std::size_t endpoint = 0;  // which of the client's endpoints it goes to (set when first sent)
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::pair<std::string, std::string>> headers;  // signed, besides S3's own and the policy's
  std::span<const char> body;     // sent (PUT, POST)
  std::span<char> dest;           // where a successful answer's body goes (GET)
  bool discard = false;           // keep only what fits in dest, count the rest
  int part = 0;                   // UploadPart's part number
  // Sent with the body: a single read callback position, rewound on retries.
  std::size_t sent = 0;
  std::uint64_t offset = 0;  // where a ranged GET or a part begins in the object
  std::uint64_t length = 0;  // the bytes it asks for or sends (0: the whole object)
  // Set when the request is first sent: its object's identity and Darshan's access pattern.
  std::uint64_t file = 0;
  std::string uri;  // s3://bucket/key: the object's name in traces
  bool data = false, sequential = false, consecutive = false;

  const Policy& policy() const { return policy_of(kind, ranged); }
  void set_range(std::uint64_t from, std::uint64_t bytes);
};

struct Client::Answer {
  int status = 0;
  std::string curl_error;  // when there was no answer
  bool untrusted = false;  // no answer because the endpoint's TLS certificate is not trusted: trying again cannot help
  std::string text;        // an error document or a small XML answer
  std::string code;        // the error document's <Code> (also of a 200 whose body is one)
  std::string etag;
  std::optional<int> retry_after;  // seconds, from Retry-After
  std::uint64_t received = 0;
  std::uint64_t content_length = 0;
  std::uint64_t object_size = 0;  // from Content-Range: bytes a-b/size
  bool has_content_range = false;
  bool overflow = false;   // the body did not fit in dest
  int attempts = 1;
  Verdict verdict = Verdict::ok;
};

// What one transfer in progress needs to stay where curl's callbacks find it.
struct Client::Transfer {
  CURL* curl = nullptr;
  Call* call = nullptr;
  Answer answer;
  std::string url;
  curl_slist* headers = nullptr;
  RequestRecord record;
  Transfer() = default;
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  ~Transfer() { curl_slist_free_all(headers); }
};

// A handle of its own (its own kept connection) for requests in flight together, and the
// request it carries.
struct Client::Lane {
  void* curl = nullptr;
  std::unique_ptr<Call> call;
  std::string object;  // the call's s3://bucket/key, for the stall watchdog
  Transfer t;
  bool busy = false;
};

// The text of the first <name>...</name> in a small XML answer ("" when there is none), from `from`.
std::string xml_value(const std::string& xml, std::string_view name, std::size_t from = 0);

}  // namespace trainio::storage::s3
