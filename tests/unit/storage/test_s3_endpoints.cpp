// Several S3 endpoints in storage_options.endpoint_url: the list, and the one each rank uses.
#include <catch2/catch.hpp>

#include "config/workload.hpp"
#include "storage/s3/s3_client.hpp"
#include "storage/s3/s3_endpoint.hpp"
#include "util/error.hpp"

using namespace trainio;

namespace {

config::S3Options options(const std::string& urls) {
  config::S3Options o;
  o.endpoint_url = urls;
  o.access_key_id = "key";
  o.secret_access_key = "secret";
  return o;
}

}  // namespace

TEST_CASE("S3 endpoints: a comma-separated list, spaces around entries dropped", "[s3]") {
  CHECK(storage::s3::endpoint_urls("http://a:1") == std::vector<std::string>{"http://a:1"});
  CHECK(storage::s3::endpoint_urls("http://a:1, http://b:2 ,http://c:3") ==
        std::vector<std::string>{"http://a:1", "http://b:2", "http://c:3"});
  CHECK_THROWS_WITH(storage::s3::endpoint_urls("http://a:1,,http://b:2"), Catch::Contains("has an empty entry"));
  CHECK_THROWS_WITH(storage::s3::endpoint_urls("http://a:1,"), Catch::Contains("has an empty entry"));
}

TEST_CASE("S3 endpoints: rank r uses endpoint r % N; by request, its requests start there", "[s3]") {
  const auto list = "http://a:1,http://b:2,http://c:3";
  for (int rank : {0, 1, 2, 3, 7}) {
    storage::s3::set_endpoint_rank(rank);
    const auto e = storage::s3::endpoint_of(options(list));
    CHECK(e.urls.size() == 3);
    CHECK(e.first == static_cast<std::size_t>(rank % 3));
    CHECK(e.url == e.urls[e.first]);
    CHECK_FALSE(e.per_request);
  }
  auto o = options(list);
  o.endpoint_spread = config::EndpointSpread::request;
  CHECK(storage::s3::endpoint_of(o).per_request);
  o.endpoint_url = "http://a:1";
  storage::s3::set_endpoint_rank(5);
  const auto one = storage::s3::endpoint_of(o);
  CHECK_FALSE(one.per_request);  // one endpoint: nothing to spread
  CHECK(one.url == "http://a:1");
  storage::s3::set_endpoint_rank(0);
}
