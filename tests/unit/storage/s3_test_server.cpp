#include "unit/storage/s3_test_server.hpp"

#include <catch2/catch.hpp>
#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <sstream>

namespace trainio::test {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) FAIL(name << " is not set: run these tests through tests/integration/s3.sh");
  return v;
}

bool models(const std::string& what) {
  std::stringstream list(env("TRAINIO_S3_MODELS"));
  for (std::string item; std::getline(list, item, ',');)
    if (item == what) return true;
  return false;
}

storage::s3::Endpoint s3_endpoint() {
  storage::s3::Endpoint e;
  e.url = env("TRAINIO_S3_ENDPOINT");
  e.credentials = {env("TRAINIO_S3_ACCESS_KEY"), env("TRAINIO_S3_SECRET_KEY"), ""};
  return e;
}

std::string control(const char* method, const std::string& what, const std::string& body) {
  const std::string url = env("TRAINIO_S3_CONTROL") + "/" + what;
  CURL* curl = curl_easy_init();
  REQUIRE(curl);
  std::string answer;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (!body.empty()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, +[](char* p, size_t size, size_t n, void* out) -> size_t {
    static_cast<std::string*>(out)->append(p, size * n);
    return size * n;
  });
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  INFO(method << " " << url << ": " << curl_easy_strerror(rc) << " " << answer);
  REQUIRE(rc == CURLE_OK);
  REQUIRE(status == 200);
  return answer;
}

void add_fault(const std::string& rule_json) { control("POST", "faults", rule_json); }
void clear_faults() { control("DELETE", "faults"); }

int logged(const std::string& op, const std::string& key, const std::string& status) {
  int n = 0;
  for (const auto& r : nlohmann::json::parse(control("GET", "log"))) {
    if (r.value("op", nlohmann::json()) != op || r.value("key", nlohmann::json()) != key) continue;
    if (!status.empty()) {
      const auto& s = r.at("status");
      if ((s.is_string() ? s.get<std::string>() : std::to_string(s.get<int>())) != status) continue;
    }
    ++n;
  }
  return n;
}

int open_uploads(const std::string& key) {
  int n = 0;
  for (const auto& u : nlohmann::json::parse(control("GET", "uploads"))) n += u.at("key") == key;
  return n;
}

}  // namespace trainio::test
