// trainio's S3 client doing exactly what bench.py's boto3 side does, one request at a time on one
// connection: PUT `objects` objects of `size` bytes, then GET each back whole. Prints one JSON line
// of throughputs and latency percentiles for bench.py to compare.
//
//   trainio_s3_bench ENDPOINT BUCKET PREFIX OBJECTS SIZE

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "storage/s3_client.hpp"
#include "util/clock.hpp"

using namespace trainio;

namespace {

struct Timings : storage::IoObserver {
  std::vector<double> total_ms, first_byte_ms;
  void on_op(const storage::OpEvent&) override {}
  void on_request(const storage::RequestEvent& r) override {
    total_ms.push_back(static_cast<double>(r.total_ns) / 1e6);
    first_byte_ms.push_back(static_cast<double>(r.first_byte_ns) / 1e6);
  }
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s ENDPOINT BUCKET PREFIX OBJECTS SIZE\n", argv[0]);
    return 2;
  }
  storage::s3::Endpoint e;
  e.url = argv[1];
  e.credentials = {"S3RVER", "S3RVER", ""};
  const std::string bucket = argv[2], prefix = argv[3];
  const int objects = std::atoi(argv[4]);
  const std::size_t size = std::strtoull(argv[5], nullptr, 10);
  std::vector<char> body(size, 'x'), back(size);
  storage::s3::Client client(e);
  std::printf("json: {");
  for (const char* phase : {"put", "get"}) {
    Timings t;
    const storage::ScopedObserver observe(&t);
    const std::int64_t t0 = util::now_ns();
    for (int i = 0; i < objects; ++i) {
      const std::string key = prefix + std::to_string(i);
      if (phase[0] == 'p') client.put(bucket, key, body);
      else client.get(bucket, key, back);
    }
    const double seconds = util::ns_to_s(util::now_ns() - t0);
    std::printf("%s\"%s\": {\"mib_per_s\": %.3f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"first_byte_p50_ms\": %.3f}",
                phase[0] == 'p' ? "" : ", ", phase, static_cast<double>(size) * objects / seconds / (1 << 20),
                percentile(t.total_ms, 0.5), percentile(t.total_ms, 0.99), percentile(t.first_byte_ms, 0.5));
  }
  std::printf("}\n");
  return 0;
}
