#pragma once
// The S3 endpoint of a workload: its storage_options, with what they leave empty taken from the
// environment as s3torchconnector's credential chain takes it (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_ENDPOINT_URL, AWS_MAX_ATTEMPTS), and AWS_CA_BUNDLE
// for an https endpoint whose certificate the system does not trust.

#include "config/workload.hpp"
#include "storage/s3_client.hpp"

namespace trainio::storage::s3 {

// Throws a config error naming the key (and the variable) when the endpoint or a credential is
// missing.
Endpoint endpoint_of(const config::S3Options& options);

}  // namespace trainio::storage::s3
