#pragma once
// The S3 endpoint of a workload: its storage_options, with what they leave empty taken from the
// environment as s3torchconnector's credential chain takes it (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_ENDPOINT_URL, AWS_MAX_ATTEMPTS), and AWS_CA_BUNDLE
// for an https endpoint whose certificate the system does not trust.

#include "config/workload.hpp"
#include "storage/s3/s3_client.hpp"

namespace trainio::storage::s3 {

// Throws a config error naming the key (and the variable) when the endpoint or a credential is
// missing. With several endpoints, this process's rank (set_endpoint_rank) picks its own.
Endpoint endpoint_of(const config::S3Options& options);
// The rank of this process, for endpoint_of(): rank r uses endpoint r % N. Set once, before the
// first client (engine::run_workflow); 0 until then.
void set_endpoint_rank(int rank);
// The endpoints a storage_options.endpoint_url lists (separated by commas).
std::vector<std::string> endpoint_urls(const std::string& list);

}  // namespace trainio::storage::s3
