#include <catch2/catch.hpp>

#include "storage/s3/s3_sigv4.hpp"

using namespace trainio::storage;

namespace {

// The example credentials and time of AWS's S3 SigV4 documentation ("Signature Calculations for
// the Authorization Header: Transferring Payload in a Single Chunk", examples).
const s3::Credentials kExample{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
constexpr const char* kHost = "examplebucket.s3.amazonaws.com";
constexpr const char* kDate = "20130524T000000Z";
const std::string kEmptySha = s3::sha256_hex("");

std::string header(const s3::Signature& s, const std::string& name) {
  for (const auto& [n, v] : s.headers)
    if (n == name) return v;
  return "";
}

}  // namespace

TEST_CASE("SigV4: AWS's GET Object example, with a Range header") {
  s3::SignedRequest r{.method = "GET", .path = "/test.txt", .query = {}, .headers = {{"Range", "bytes=0-9"}},
                      .payload_sha256 = kEmptySha};
  const s3::Signature s = s3::sign(r, kExample, kHost, "us-east-1", kDate);
  CHECK(kEmptySha == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(header(s, "authorization") ==
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
        "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST_CASE("SigV4: AWS's PUT Object example, a key that needs encoding and a signed body") {
  const std::string body = "Welcome to Amazon S3.";
  s3::SignedRequest r{.method = "PUT",
                      .path = "/test$file.text",
                      .query = {},
                      .headers = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"}, {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
                      .payload_sha256 = s3::sha256_hex(body)};
  const s3::Signature s = s3::sign(r, kExample, kHost, "us-east-1", kDate);
  CHECK(s.canonical_request.rfind("PUT\n/test%24file.text\n\n", 0) == 0);
  CHECK(header(s, "authorization").ends_with("Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"));
}

TEST_CASE("SigV4: AWS's GET Bucket example, a query string sorted and encoded") {
  s3::SignedRequest r{.method = "GET", .path = "/", .query = {{"prefix", "J"}, {"max-keys", "2"}}, .headers = {},
                      .payload_sha256 = kEmptySha};
  const s3::Signature s = s3::sign(r, kExample, kHost, "us-east-1", kDate);
  CHECK(s.canonical_request.rfind("GET\n/\nmax-keys=2&prefix=J\n", 0) == 0);
  CHECK(header(s, "authorization").ends_with("Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"));
}

TEST_CASE("SigV4: a query key without a value (CreateMultipartUpload's ?uploads) signs as key=") {
  s3::SignedRequest r{.method = "POST", .path = "/bucket/a b.npz", .query = {{"uploads", ""}}, .headers = {}};
  const s3::Signature s = s3::sign(r, kExample, "127.0.0.1:9000", "us-east-1", kDate);
  CHECK(s.canonical_request.rfind("POST\n/bucket/a%20b.npz\nuploads=\n", 0) == 0);
  CHECK(header(s, "x-amz-content-sha256") == "UNSIGNED-PAYLOAD");
  CHECK(header(s, "host") == "127.0.0.1:9000");
}
