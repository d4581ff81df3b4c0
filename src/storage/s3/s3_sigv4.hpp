#pragma once
// AWS Signature Version 4 for S3 requests (header-based): the canonical request, the string to
// sign and the signing key, with OpenSSL's SHA-256 and HMAC. Pure functions of their inputs, so
// the signer is tested against AWS's published examples and against botocore's signer.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainio::storage::s3 {

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // temporary credentials only (sent as x-amz-security-token)
};

// The payload hash S3 accepts in place of a body's SHA-256 (the request body is then not signed,
// as most S3 clients send bulk data over TLS or to trusted endpoints).
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";

struct SignedRequest {
  std::string method;                                     // GET, PUT, HEAD, POST, DELETE
  std::string path;                                       // "/bucket/key" or "/key", not yet encoded
  std::vector<std::pair<std::string, std::string>> query;  // not yet encoded; a key with no value has ""
  // Headers to sign besides host, x-amz-date and x-amz-content-sha256 (which sign() adds);
  // names in any case.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string payload_sha256 = std::string(kUnsignedPayload);  // hex, or UNSIGNED-PAYLOAD
};

// What to send: every signed header (lower-case names, in canonical order) and Authorization.
struct Signature {
  std::vector<std::pair<std::string, std::string>> headers;  // including "authorization"
  std::string canonical_request;                            // for error messages and tests
  std::string string_to_sign;
};

// `amz_date` is "YYYYMMDDTHHMMSSZ" (UTC); `host` as sent in the Host header (with :port when not
// the scheme's default).
Signature sign(const SignedRequest& request, const Credentials& credentials, std::string_view host,
               std::string_view region, std::string_view amz_date);

// RFC 3986 encoding as SigV4 wants it: unreserved characters kept, '/' kept when `keep_slash`.
std::string uri_encode(std::string_view text, bool keep_slash);
// Hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);
// The current time as an x-amz-date.
std::string amz_date_now();

}  // namespace trainio::storage::s3
