#pragma once
// The S3 server tests/integration/s3.sh started for the [.s3] tests, as its environment names it,
// and the strict test server's control requests (tests/integration/strict_s3.py): fault rules,
// the requests it answered, the uploads in progress.

#include <string>

#include "storage/s3/s3_client.hpp"

namespace trainio::test {

// The variable's value; fails the test when s3.sh did not set it.
std::string env(const char* name);
// Whether the server checks `what` (TRAINIO_S3_MODELS: access_keys, signatures, faults, ...).
bool models(const std::string& what);
// The server's endpoint with the test credentials.
storage::s3::Endpoint s3_endpoint();

// A control request to the strict server (`what`: faults, log, uploads, object?...); returns the
// JSON answer's text. Fails the test unless it answers 200.
std::string control(const char* method, const std::string& what, const std::string& body = "");
// Adds a fault rule (strict_s3_faults.py's JSON) until clear_faults().
void add_fault(const std::string& rule_json);
void clear_faults();
// How many of the requests the server answered, since the log was last cleared, were operation
// `op` on `key` (with `status` when given: "200", "404", "lost", "reset").
int logged(const std::string& op, const std::string& key, const std::string& status = "");
// The multipart uploads in progress for `key`.
int open_uploads(const std::string& key);

}  // namespace trainio::test
