#include "storage/s3/s3_sigv4.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

#include "util/error.hpp"

namespace trainio::storage::s3 {

namespace {

std::string hex(const unsigned char* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * size, '0');
  for (std::size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 15];
  }
  return out;
}

std::string hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
            data.size(), out, &size))
    throw internal_error("OpenSSL's HMAC-SHA256 failed");
  return {reinterpret_cast<const char*>(out), size};
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Header values are signed trimmed, with runs of spaces inside folded to one.
std::string trimmed(std::string_view v) {
  std::string out;
  bool space = false;
  for (const char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string uri_encode(std::string_view text, bool keep_slash) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/'))
      out += ch;
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return hex(digest, sizeof digest);
}

std::string amz_date_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[17];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

Signature sign(const SignedRequest& request, const Credentials& credentials, std::string_view host,
               std::string_view region, std::string_view amz_date) {
  std::vector<std::pair<std::string, std::string>> headers;
  headers.emplace_back("host", std::string(host));
  headers.emplace_back("x-amz-content-sha256", request.payload_sha256);
  headers.emplace_back("x-amz-date", std::string(amz_date));
  if (!credentials.session_token.empty()) headers.emplace_back("x-amz-security-token", credentials.session_token);
  for (const auto& [name, value] : request.headers) headers.emplace_back(lower(name), trimmed(value));
  std::sort(headers.begin(), headers.end());

  std::vector<std::pair<std::string, std::string>> query;
  for (const auto& [k, v] : request.query) query.emplace_back(uri_encode(k, false), uri_encode(v, false));
  std::sort(query.begin(), query.end());

  std::string canonical = request.method + "\n" + uri_encode(request.path, true) + "\n";
  for (std::size_t i = 0; i < query.size(); ++i) canonical += (i ? "&" : "") + query[i].first + "=" + query[i].second;
  canonical += "\n";
  std::string signed_names;
  for (const auto& [name, value] : headers) {
    canonical += name + ":" + value + "\n";
    signed_names += (signed_names.empty() ? "" : ";") + name;
  }
  canonical += "\n" + signed_names + "\n" + request.payload_sha256;

  const std::string day(amz_date.substr(0, 8));
  const std::string scope = fmt::format("{}/{}/s3/aws4_request", day, region);
  Signature s;
  s.string_to_sign = fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", amz_date, scope, sha256_hex(canonical));
  const std::string key =
      hmac(hmac(hmac(hmac("AWS4" + credentials.secret_access_key, day), region), "s3"), "aws4_request");
  const std::string mac = hmac(key, s.string_to_sign);
  const std::string signature = hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
  s.headers = std::move(headers);
  s.headers.emplace_back("authorization",
                         fmt::format("AWS4-HMAC-SHA256 Credential={}/{},SignedHeaders={},Signature={}",
                                     credentials.access_key_id, scope, signed_names, signature));
  s.canonical_request = std::move(canonical);
  return s;
}

}  // namespace trainio::storage::s3
