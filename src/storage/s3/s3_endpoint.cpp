#include "storage/s3/s3_endpoint.hpp"

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

int endpoint_rank = 0;  // set_endpoint_rank()

}  // namespace

void set_endpoint_rank(int rank) { endpoint_rank = rank; }

std::vector<std::string> endpoint_urls(const std::string& list) {
  std::vector<std::string> urls;
  std::size_t at = 0;
  while (true) {
    const auto comma = list.find(',', at);
    std::string url = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    url.erase(0, url.find_first_not_of(" \t"));
    url.erase(url.find_last_not_of(" \t") + 1);
    if (url.empty())
      throw config_error(fmt::format("storage.storage_options.endpoint_url '{}' has an empty entry", list),
                         "list the endpoints separated by single commas: http://10.0.0.5:9000,http://10.0.0.6:9000");
    urls.push_back(std::move(url));
    if (comma == std::string::npos) return urls;
    at = comma + 1;
  }
}

Endpoint endpoint_of(const config::S3Options& options) {
  Endpoint e;
  const std::string list = setting(options.endpoint_url, "AWS_ENDPOINT_URL", "endpoint_url");
  if (util::url_has_user_info(list))  // (the workload's own is refused when it loads)
    throw config_error(fmt::format("AWS_ENDPOINT_URL '{}' holds credentials (before its '@')", util::redact(list)),
                       "give the endpoint as http(s)://host[:port], and the keys in AWS_ACCESS_KEY_ID and "
                       "AWS_SECRET_ACCESS_KEY (or storage.storage_options)");
  // Newer DLIO files list several endpoints, rank r using endpoint r % N (the MLCommons fork).
  e.urls = endpoint_urls(list);
  e.first = static_cast<std::size_t>(endpoint_rank) % e.urls.size();
  e.url = e.urls[e.first];
  e.per_request = options.endpoint_spread == config::EndpointSpread::request && e.urls.size() > 1;
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
