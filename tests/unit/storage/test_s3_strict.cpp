// What a careful S3 endpoint requires of a client, against the server tests/integration/s3.sh
// starts: hidden, tagged [.s3] (every server) or [.s3-faults] (the strict test server only,
// tests/integration/strict_s3.py, which injects faults on request and says what it received).

#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "storage/s3/s3_client.hpp"
#include "storage/s3/s3_upload.hpp"
#include "unit/storage/s3_test_server.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

using namespace trainio;
using namespace trainio::storage;
using trainio::test::env;
using trainio::test::models;

namespace {

std::vector<char> bytes_of(std::size_t n, unsigned seed) {
  std::vector<char> v(n);
  std::uint32_t x = seed * 2654435761u + 7;
  for (auto& c : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x);
  }
  return v;
}

// A key of this test run (the server may hold objects of earlier runs).
std::string key(const std::string& name) {
  static const std::string run = std::to_string(::getpid()) + "-" + std::to_string(util::now_ns());
  return "strict/" + run + "/" + name;
}

void leave_for_crosscheck(const std::string& name, const std::string& object_key, const std::vector<char>& bytes) {
  const char* folder = std::getenv("TRAINIO_S3_CROSSCHECK");
  if (!folder) return;
  const std::string base = std::string(folder) + "/" + name;
  std::ofstream(base, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::ofstream(base + ".key", std::ios::binary) << object_key;
}

struct Requests : IoObserver {
  std::vector<RequestEvent> seen;
  void on_op(const OpEvent&) override {}
  void on_request(const RequestEvent& r) override { seen.push_back(r); }
  const RequestEvent* last(Request kind) const {
    for (auto it = seen.rbegin(); it != seen.rend(); ++it)
      if (it->kind == kind) return &*it;
    return nullptr;
  }
};

void upload(s3::Client& client, const std::string& bucket, const std::string& name, const std::vector<char>& bytes,
            std::size_t part = s3::kMinPartBytes) {
  s3::Upload out(client, bucket, name, part, s3::Upload::Parts::always_multipart, 2);
  out.write_at(bytes.data(), bytes.size(), 0);
  out.commit();
}

std::vector<char> read_back(s3::Client& client, const std::string& bucket, const std::string& name, std::size_t size) {
  std::vector<char> back(size + 1);  // one more: a longer object overflows and says so
  CHECK(client.get(bucket, name, back) == size);
  back.resize(size);
  return back;
}

// Every fault rule a test adds goes when it ends.
struct Faults {
  Faults() { trainio::test::clear_faults(); }
  ~Faults() { trainio::test::clear_faults(); }
};

}  // namespace

TEST_CASE("S3 strict: a multipart upload's requests carry S3's content types, not libcurl's form type", "[.s3]") {
  s3::Client client(trainio::test::s3_endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  const std::vector<char> bytes = bytes_of(70'000, 1);
  upload(client, bucket, key("typed.npz"), bytes);
  CHECK(client.size_of(bucket, key("typed.npz")) == bytes.size());
  client.put(bucket, key("typed-put.npz"), bytes);
  if (!models("faults")) return;  // only the strict server says what it received
  const std::string meta = trainio::test::control("GET", "object?bucket=" + bucket + "&key=" + key("typed.npz"));
  CHECK_THAT(meta, Catch::Contains(R"("content_type": "application/octet-stream")"));
  const std::string put = trainio::test::control("GET", "object?bucket=" + bucket + "&key=" + key("typed-put.npz"));
  CHECK_THAT(put, Catch::Contains(R"("content_type": "application/octet-stream")"));
}

TEST_CASE("S3 strict: keys with spaces, unicode, '+', '%', './' and '../' are stored under the key as written", "[.s3]") {
  s3::Client client(trainio::test::s3_endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  const std::vector<std::string> names = {"a b/c+d%20e/\xc3\xbc\xe2\x82\xac.npz", "dots/./here.npz", "dots/../up.npz",
                                          "dots/x/../../twice.npz"};
  int i = 0;
  for (const auto& name : names) {
    INFO(name);
    const std::vector<char> bytes = bytes_of(1000 + 17 * i, 10 + i);
    client.put(bucket, key(name), bytes);
    CHECK(client.size_of(bucket, key(name)) == bytes.size());
    CHECK(read_back(client, bucket, key(name), bytes.size()) == bytes);
    leave_for_crosscheck("key-" + std::to_string(i++), key(name), bytes);
  }
  // Not stored where a path's dot segments would lead: the prefix holds only the keys written.
  // (s3rver removes dot segments itself, as a browser would: it cannot tell.)
  const bool literal = models("literal_keys");
  if (literal) CHECK_FALSE(client.size_of(bucket, key("dots/here.npz")));
  if (literal) CHECK_FALSE(client.size_of(bucket, key("up.npz")));
  // A multipart upload and a whole-object read of such a key.
  const std::vector<char> big = bytes_of(s3::kMinPartBytes + 4321, 20);
  upload(client, bucket, key("dots/../multi part+.npz"), big);
  char head[4] = {};
  CHECK(client.read_object(bucket, key("dots/../multi part+.npz"), head, 1u << 20, 4) == big.size());
  CHECK(std::equal(head, head + 4, big.begin()));
  if (literal) CHECK_FALSE(client.size_of(bucket, key("multi part+.npz")));
  leave_for_crosscheck("key-multipart", key("dots/../multi part+.npz"), big);
  client.put(bucket, key("dots/./gone.npz"), big);
  client.remove(bucket, key("dots/./gone.npz"));
  CHECK_FALSE(client.size_of(bucket, key("dots/./gone.npz")));
}

TEST_CASE("S3 strict: an empty object is written and read as empty, however it is read", "[.s3]") {
  s3::Client client(trainio::test::s3_endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  client.put(bucket, key("empty.npz"), {});
  CHECK(client.size_of(bucket, key("empty.npz")) == 0u);
  Requests requests;
  const ScopedObserver observing(&requests);
  char head[8] = {'x'};
  // The CRT's way: a first ranged GET, which S3 answers 416 for an empty object.
  CHECK(client.read_object(bucket, key("empty.npz"), head, 8u << 20, 8) == 0);
  CHECK(head[0] == 'x');  // nothing landed
  std::vector<char> whole(4);
  CHECK(client.get(bucket, key("empty.npz"), whole) == 0);
  leave_for_crosscheck("empty", key("empty.npz"), {});
  // Through an upload too: a single PUT of nothing.
  s3::Upload out(client, bucket, key("empty-upload.npz"), s3::kPartBytes, s3::Upload::Parts::put_when_small);
  out.commit();
  CHECK(client.size_of(bucket, key("empty-upload.npz")) == 0u);
}

TEST_CASE("S3 strict: a CompleteMultipartUpload whose answer is lost succeeds once a HEAD finds the object whole",
          "[.s3-faults]") {
  const Faults faults;
  s3::Client client(trainio::test::s3_endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  const std::vector<char> bytes = bytes_of(2 * s3::kMinPartBytes + 999, 3);
  trainio::test::add_fault(R"({"op": "CompleteMultipartUpload", "key": ")" + key("lost-complete") + R"(", "fault": "lose_answer"})");
  Requests requests;
  {
    const ScopedObserver observing(&requests);
    upload(client, bucket, key("lost-complete.npz"), bytes);
  }
  // The server completed it, lost the answer, then answered the retry 404 NoSuchUpload.
  CHECK(trainio::test::logged("CompleteMultipartUpload", key("lost-complete.npz"), "lost") == 1);
  CHECK(trainio::test::logged("CompleteMultipartUpload", key("lost-complete.npz"), "404") == 1);
  const RequestEvent* complete = requests.last(Request::complete_upload);
  REQUIRE(complete);
  CHECK(complete->attempts == 2);
  CHECK(read_back(client, bucket, key("lost-complete.npz"), bytes.size()) == bytes);

  // A completion that did not happen is not taken for one: the upload vanished (aborted by
  // someone else) and the object under the key is not this upload's.
  client.put(bucket, key("vanished.npz"), bytes_of(10, 4));
  trainio::test::add_fault(R"({"op": "CompleteMultipartUpload", "key": ")" + key("vanished") + R"(", "fault": "no_such_upload"})");
  try {
    upload(client, bucket, key("vanished.npz"), bytes);
    FAIL("a completion that never happened was taken for one");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::io);
    CHECK_THAT(e.what(), Catch::Contains("NoSuchUpload"));
    CHECK_THAT(e.hint(), Catch::Contains("lifecycle"));
  }
}

TEST_CASE("S3 strict: a retried CreateMultipartUpload leaves no upload in progress behind", "[.s3-faults]") {
  const Faults faults;
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  for (const bool kept_connection : {false, true}) {
    INFO((kept_connection ? "on a kept connection" : "as the client's first request"));
    s3::Client client(trainio::test::s3_endpoint());
    const std::string name = key(std::string("orphan-") + (kept_connection ? "kept" : "first") + ".npz");
    if (kept_connection) CHECK_FALSE(client.size_of(bucket, name));  // a connection to keep
    trainio::test::add_fault(R"({"op": "CreateMultipartUpload", "key": ")" + name + R"(", "fault": "lose_answer"})");
    const std::vector<char> bytes = bytes_of(12'345, 5);
    Requests requests;
    {
      const ScopedObserver observing(&requests);
      upload(client, bucket, name, bytes);
    }
    CHECK(trainio::test::logged("CreateMultipartUpload", name) == 2);
    CHECK(trainio::test::open_uploads(name) == 0);
    const RequestEvent* create = requests.last(Request::create_upload);
    REQUIRE(create);
    CHECK(create->attempts == 2);  // the resend is the client's, and counted
    CHECK(read_back(client, bucket, name, bytes.size()) == bytes);
  }
}

TEST_CASE("S3 strict: 503 SlowDown waits as long as Retry-After asks, 500 and a late error are retried", "[.s3-faults]") {
  const Faults faults;
  s3::Client client(trainio::test::s3_endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  const std::vector<char> bytes = bytes_of(5000, 6);
  trainio::test::add_fault(R"({"op": "PutObject", "key": ")" + key("slow") + R"(", "fault": "slow_down", "retry_after": 1})");
  trainio::test::add_fault(R"({"op": "GetObject", "key": ")" + key("slow") + R"(", "fault": "internal_error", "times": 2})");
  trainio::test::add_fault(R"({"op": "CompleteMultipartUpload", "key": ")" + key("late") + R"(", "fault": "late_error"})");
  Requests requests;
  const ScopedObserver observing(&requests);
  client.put(bucket, key("slow.npz"), bytes);
  const RequestEvent put = requests.seen.back();
  CHECK(put.attempts == 2);
  CHECK(put.total_ns >= 1'000'000'000);  // the server's second, not the 0.1 s back-off
  CHECK(read_back(client, bucket, key("slow.npz"), bytes.size()) == bytes);
  CHECK(requests.seen.back().attempts == 3);  // GET: two 500s, then the object
  upload(client, bucket, key("late.npz"), bytes);
  const RequestEvent* complete = requests.last(Request::complete_upload);
  REQUIRE(complete);
  CHECK(complete->attempts == 2);
  CHECK(complete->status == 200);
  CHECK(trainio::test::logged("CompleteMultipartUpload", key("late.npz")) == 2);
  CHECK(read_back(client, bucket, key("late.npz"), bytes.size()) == bytes);
}

TEST_CASE("S3 strict: a connection reset mid-body is retried, and the bytes are whole", "[.s3-faults]") {
  const Faults faults;
  s3::Client client(trainio::test::s3_endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  const std::vector<char> bytes = bytes_of(3 * s3::kMinPartBytes + 77, 7);
  const std::string name = key("reset.npz");
  // Halfway through the first UploadPart's body and through each GET's answer.
  trainio::test::add_fault(R"({"op": "UploadPart", "key": ")" + name + R"(", "fault": "reset"})");
  trainio::test::add_fault(R"({"op": "GetObject", "key": ")" + name + R"(", "fault": "reset", "per_key": true, "times": 3})");
  Requests requests;
  const ScopedObserver observing(&requests);
  upload(client, bucket, name, bytes);
  CHECK(trainio::test::logged("UploadPart", name, "reset") == 1);
  std::uint64_t retries = 0;
  for (const auto& r : requests.seen) retries += static_cast<std::uint64_t>(r.attempts - 1);
  CHECK(retries == 1);
  requests.seen.clear();
  char head[16] = {};
  CHECK(client.read_object(bucket, name, head, 1u << 20, 4) == bytes.size());
  CHECK(std::equal(head, head + 16, bytes.begin()));
  CHECK(trainio::test::logged("GetObject", name, "reset") == 3);
  std::uint64_t received = 0;
  retries = 0;
  for (const auto& r : requests.seen) {
    received += r.bytes;
    retries += static_cast<std::uint64_t>(r.attempts - 1);
  }
  CHECK(received == bytes.size());  // the bytes of the answers that counted, once each
  CHECK(retries == 3);
  CHECK(read_back(client, bucket, name, bytes.size()) == bytes);
}

TEST_CASE("S3 strict: a throttling server (503 SlowDown past a request rate) slows the client, which finishes", "[.s3-faults]") {
  const Faults faults;
  s3::Client client(trainio::test::s3_endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  trainio::test::add_fault(R"({"op": "*", "key": ")" + key("throttled/") + R"(", "fault": "throttle", "rate": 20,
                              "burst": 5, "retry_after": 0})");
  Requests requests;
  const ScopedObserver observing(&requests);
  const std::vector<char> bytes = bytes_of(100, 8);
  const std::int64_t t0 = util::now_ns();
  for (int i = 0; i < 30; ++i) client.put(bucket, key("throttled/" + std::to_string(i)), bytes);
  const double seconds = util::ns_to_s(util::now_ns() - t0);
  int retried = 0;
  for (const auto& r : requests.seen) retried += r.attempts > 1;
  CHECK(retried > 0);
  CHECK(seconds > 0.8);  // (30 - 5 burst) / 20 per second, at the least
  CHECK(requests.seen.size() == 30);
  for (const auto& r : requests.seen) CHECK(r.status == 200);
}
