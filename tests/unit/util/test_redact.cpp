#include <catch2/catch.hpp>

#include "util/redact.hpp"

using trainio::util::is_secret_key;
using trainio::util::redact;
using trainio::util::redact_value;

TEST_CASE("keys that name secrets, by their last part in any case") {
  CHECK(is_secret_key("storage.storage_options.secret_access_key"));
  CHECK(is_secret_key("session_token"));
  CHECK(is_secret_key("db.Password"));
  CHECK(is_secret_key("AWS_SECRET_ACCESS_KEY"));
  CHECK_FALSE(is_secret_key("storage.storage_options.access_key_id"));
  CHECK_FALSE(is_secret_key("secret.region"));  // a section named so: its other keys are not secrets
  CHECK_FALSE(is_secret_key("reader.batch_size"));
}

TEST_CASE("a secret key's value and a URL's user-info are shown as ***") {
  CHECK(redact_value("storage.storage_options.secret_access_key", "abc/DEF+1") == "***");
  CHECK(redact_value("storage.storage_options.secret_access_key", "").empty());
  CHECK(redact_value("storage.storage_options.endpoint_url", "http://AK:s3cr3t@10.0.0.1:9000/") ==
        "http://***@10.0.0.1:9000/");
  CHECK(redact_value("storage.storage_options.endpoint_url", "https://s3.example.com") == "https://s3.example.com");
  CHECK(redact_value("reader.batch_size", "8") == "8");
}

TEST_CASE("text: every key=value with a secret key, whole brackets and quotes, and URLs") {
  CHECK(redact("trainio run default storage.storage_options.secret_access_key=abc reader.batch_size=4") ==
        "trainio run default storage.storage_options.secret_access_key=*** reader.batch_size=4");
  CHECK(redact("override 'x.secret_access_key=abc,def': bad") == "override 'x.secret_access_key=***': bad");
  CHECK(redact("++workload.a.password={k: v, w: [1, 2]} next") == "++workload.a.password=*** next");
  CHECK(redact("[\"default\",\"storage.storage_options.secret_access_key=abc\"]") ==
        "[\"default\",\"storage.storage_options.secret_access_key=***\"]");
  CHECK(redact("no answer from http://key:secret@host:9 after 1 attempt") == "no answer from http://***@host:9 after 1 attempt");
  CHECK(redact("at s3://bucket/key and http://host/a@b") == "at s3://bucket/key and http://host/a@b");  // no user-info
  CHECK(redact("a.secret_access_key=*** stays") == "a.secret_access_key=*** stays");
  CHECK(redact("secret_access_key= nothing") == "secret_access_key= nothing");
  CHECK(redact("token") == "token");
}
