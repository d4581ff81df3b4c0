// trainio's S3 client doing exactly what s3_bench.py's reference side does: PUT `objects` objects
// of `size` bytes, then GET each back whole, IN_FLIGHT requests at a time (one thread and one
// client, so one kept connection, per request in flight; the threads take the objects in turn).
// Prints one JSON line of throughputs and latency percentiles.
//
//   trainio_s3_bench ENDPOINT BUCKET PREFIX OBJECTS SIZE [IN_FLIGHT] [KEY SECRET]

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/s3/s3_client.hpp"
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
  if (argc != 6 && argc != 7 && argc != 9) {
    std::fprintf(stderr, "usage: %s ENDPOINT BUCKET PREFIX OBJECTS SIZE [IN_FLIGHT] [KEY SECRET]\n", argv[0]);
    return 2;
  }
  storage::s3::Endpoint e;
  e.url = argv[1];
  e.credentials = {argc == 9 ? argv[7] : "S3RVER", argc == 9 ? argv[8] : "S3RVER", ""};
  e.max_attempts = 1;  // as the reference side: a failure is a failure, not a hidden retry
  const std::string bucket = argv[2], prefix = argv[3];
  const int objects = std::atoi(argv[4]);
  const std::size_t size = std::strtoull(argv[5], nullptr, 10);
  const int in_flight = argc >= 7 ? std::max(1, std::atoi(argv[6])) : 1;
  const std::vector<char> body(size, 'x');
  std::printf("json: {");
  for (const char* phase : {"put", "get"}) {
    std::atomic<int> next{0}, ready{0};
    std::atomic<bool> go{false};
    std::mutex merge;
    Timings all;
    // Each thread makes its client and pre-faults its buffer before the clock starts: the timed
    // part is the requests.
    const auto work = [&] {
      storage::s3::Client client(e);
      std::vector<char> back(size, 1);
      Timings t;
      ++ready;
      while (!go) std::this_thread::yield();
      {
        const storage::ScopedObserver observe(&t);
        for (int i = next++; i < objects; i = next++) {
          const std::string key = prefix + std::to_string(i);
          if (phase[0] == 'p') client.put(bucket, key, body);
          else client.get(bucket, key, back);
        }
      }
      const std::lock_guard lock(merge);
      all.total_ms.insert(all.total_ms.end(), t.total_ms.begin(), t.total_ms.end());
      all.first_byte_ms.insert(all.first_byte_ms.end(), t.first_byte_ms.begin(), t.first_byte_ms.end());
    };
    std::vector<std::thread> threads;
    for (int i = 0; i < in_flight; ++i) threads.emplace_back(work);
    while (ready < in_flight) std::this_thread::yield();
    const std::int64_t t0 = util::now_ns();
    go = true;
    for (auto& t : threads) t.join();
    const double seconds = util::ns_to_s(util::now_ns() - t0);
    std::printf("%s\"%s\": {\"mib_per_s\": %.3f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"first_byte_p50_ms\": %.3f}",
                phase[0] == 'p' ? "" : ", ", phase, static_cast<double>(size) * objects / seconds / (1 << 20),
                percentile(all.total_ms, 0.5), percentile(all.total_ms, 0.99), percentile(all.first_byte_ms, 0.5));
  }
  std::printf("}\n");
  return 0;
}
