#include "storage/s3_endpoint.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "util/error.hpp"
#include "util/redact.hpp"

namespace trainio::storage::s3 {

namespace {

std::string setting(const std::string& value, const char* variable, const char* key) {
  if (!value.empty()) return value;
  if (const char* v = std::getenv(variable); v && *v) return v;
  throw config_error(fmt::format("storage.storage_options.{} is not set, nor is {}", key, variable),
                     fmt::format("give storage.storage_options.{} in the workload (or as an override), or export {}", key,
                                 variable));
}

}  // namespace

Endpoint endpoint_of(const config::S3Options& options) {
  Endpoint e;
  e.url = setting(options.endpoint_url, "AWS_ENDPOINT_URL", "endpoint_url");
  if (util::url_has_user_info(e.url))  // (the workload's own is refused when it loads)
    throw config_error(fmt::format("AWS_ENDPOINT_URL '{}' holds credentials (before its '@')", util::redact(e.url)),
                       "give the endpoint as http(s)://host[:port], and the keys in AWS_ACCESS_KEY_ID and "
                       "AWS_SECRET_ACCESS_KEY (or storage.storage_options)");
  // Newer DLIO files list several endpoints, rank r using endpoint r % N.
  if (e.url.find(',') != std::string::npos)
    throw config_error(fmt::format("storage.storage_options.endpoint_url '{}' lists several endpoints; trainio takes one",
                                   e.url),
                       "give one endpoint (a load balancer's, or one server's) in storage.storage_options.endpoint_url");
  e.region = options.region;
  e.path_style = options.force_path_style;
  e.max_attempts = static_cast<int>(options.max_attempts);
  // As in s3torchconnector, AWS_MAX_ATTEMPTS overrides the configured tries.
  if (const char* v = std::getenv("AWS_MAX_ATTEMPTS"); v && std::atoi(v) > 0) e.max_attempts = std::atoi(v);
  e.credentials.access_key_id = setting(options.access_key_id, "AWS_ACCESS_KEY_ID", "access_key_id");
  e.credentials.secret_access_key = setting(options.secret_access_key, "AWS_SECRET_ACCESS_KEY", "secret_access_key");
  if (const char* token = std::getenv("AWS_SESSION_TOKEN")) e.credentials.session_token = token;
  if (const char* bundle = std::getenv("AWS_CA_BUNDLE")) e.ca_bundle = bundle;
  return e;
}

}  // namespace trainio::storage::s3
