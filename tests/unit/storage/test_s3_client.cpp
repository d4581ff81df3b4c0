// Against a real S3 server: hidden ([.s3]), run by tests/integration/s3.sh, which starts one on
// loopback (s3rver, the strict test server or moto) and sets TRAINIO_S3_ENDPOINT, _BUCKET,
// _ACCESS_KEY, _SECRET_KEY, _MODELS (what the server checks) and _CROSSCHECK (a folder where
// these tests leave the bytes they uploaded for boto3 to compare).

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "unit/storage/s3_test_server.hpp"
#include "storage/s3/s3_client.hpp"
#include "storage/s3/s3_upload.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

using namespace trainio;
using namespace trainio::storage;
using trainio::test::env;
using trainio::test::models;

namespace {

s3::Endpoint endpoint() {
  s3::Endpoint e = trainio::test::s3_endpoint();
  e.max_attempts = 2;
  return e;
}

std::vector<char> pattern(std::size_t n, unsigned seed) {
  std::vector<char> v(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& c : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x);
  }
  return v;
}

// Leaves the bytes an object should hold, and its key, for another S3 client to compare.
void leave_for_crosscheck(const std::string& name, const std::string& object_key, const std::vector<char>& bytes) {
  const char* folder = std::getenv("TRAINIO_S3_CROSSCHECK");
  if (!folder) return;
  const std::string base = std::string(folder) + "/" + name;
  std::ofstream(base, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::ofstream(base + ".key") << object_key;
}

// A key of this test run: the server may hold objects of earlier runs.
std::string key(const std::string& name) {
  static const std::string run = std::to_string(::getpid()) + "-" + std::to_string(util::now_ns());
  return "t/" + run + "/" + name;
}

// The object's bytes, read back whole.
std::vector<char> stored(s3::Client& client, const std::string& bucket, const std::string& name, std::size_t size) {
  std::vector<char> back(size);
  client.get(bucket, name, back);
  return back;
}

// How many pairs of the requests were in flight at the same time.
int overlapping_pairs(const std::vector<storage::RequestEvent>& r) {
  int n = 0;
  for (std::size_t i = 0; i < r.size(); ++i)
    for (std::size_t j = i + 1; j < r.size(); ++j)
      n += r[i].start_ns < r[j].start_ns + r[j].total_ns && r[j].start_ns < r[i].start_ns + r[i].total_ns;
  return n;
}

struct Requests : storage::IoObserver {
  std::vector<storage::RequestEvent> seen;
  std::vector<storage::OpEvent> calls;
  void on_op(const storage::OpEvent& e) override { calls.push_back(e); }
  void on_request(const storage::RequestEvent& r) override { seen.push_back(r); }
};

}  // namespace

TEST_CASE("S3: PUT, HEAD, whole and ranged GET, DELETE", "[.s3]") {
  s3::Client client(endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  client.check_bucket(bucket);
  const std::vector<char> bytes = pattern(300'000, 1);
  Requests requests;
  const storage::ScopedObserver observing(&requests);  // gone with the test, whatever it throws
  client.put(bucket, key("put.bin"), bytes);
  CHECK(client.size_of(bucket, key("put.bin")) == bytes.size());
  CHECK_FALSE(client.size_of(bucket, key("missing.bin")));

  std::vector<char> whole(bytes.size());
  CHECK(client.get(bucket, key("put.bin"), whole) == bytes.size());
  CHECK(whole == bytes);
  std::vector<char> part(1000);
  CHECK(client.get(bucket, key("put.bin"), part, 123'456, 1000) == 1000);
  CHECK(std::equal(part.begin(), part.end(), bytes.begin() + 123'456));
  storage::set_thread_observer(nullptr);

  REQUIRE(requests.seen.size() == 5);
  for (const auto& r : requests.seen) {
    CHECK(r.attempts == 1);
    CHECK(r.first_byte_ns > 0);
    CHECK(r.first_byte_ns <= r.total_ns);
  }
  CHECK(requests.seen[0].kind == s3::Request::put);
  CHECK(requests.seen[0].bytes == bytes.size());
  CHECK(requests.seen[2].status == 404);  // HEAD of the missing object
  CHECK(requests.seen[3].bytes == bytes.size());
  CHECK(requests.seen[4].status == 206);  // the ranged GET
  // Each request is also the storage call it stands for, so the usual I/O figures count it.
  REQUIRE(requests.calls.size() == 5);
  CHECK(requests.calls[0].op == storage::Op::write);
  CHECK(requests.calls[0].bytes == bytes.size());
  CHECK(requests.calls[1].op == storage::Op::stat);
  CHECK(requests.calls[4].op == storage::Op::read);
  CHECK(requests.calls[4].offset == 123'456);
  CHECK(requests.calls[4].bytes == 1000);
  for (const auto& c : requests.calls) CHECK(c.remote);

  client.remove(bucket, key("put.bin"));
  CHECK_FALSE(client.size_of(bucket, key("put.bin")));
}

TEST_CASE("S3: a whole-object read is a first ranged GET, then the other parts several at a time", "[.s3]") {
  s3::Client client(endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  const std::size_t part = 1u << 20;
  const std::vector<char> bytes = pattern(5 * part + part / 2, 8);
  client.put(bucket, key("whole.bin"), bytes);
  for (const int in_flight : {1, 4}) {
    INFO(in_flight << " parts in flight");
    Requests requests;
    const storage::ScopedObserver observing(&requests);  // gone with the test, whatever it throws
    char head[8] = {};
    CHECK(client.read_object(bucket, key("whole.bin"), head, part, in_flight) == bytes.size());
    storage::set_thread_observer(nullptr);
    CHECK(std::equal(head, head + 8, bytes.begin()));
    REQUIRE(requests.seen.size() == 6);  // the first part, then five more
    std::uint64_t received = 0;
    for (const auto& r : requests.seen) {
      CHECK(r.kind == s3::Request::get);
      CHECK(r.status == 206);
      received += r.bytes;
    }
    CHECK(received == bytes.size());
    // The first part is alone (it tells the size); the others overlap in time when allowed to.
    const auto& first = requests.seen.front();
    for (std::size_t i = 1; i < requests.seen.size(); ++i) CHECK(requests.seen[i].start_ns >= first.start_ns + first.total_ns);
    const int overlapping = overlapping_pairs({requests.seen.begin() + 1, requests.seen.end()});
    if (in_flight == 1) CHECK(overlapping == 0);
    else CHECK(overlapping > 0);
    // Each part is also a read at its offset, Darshan's pattern judged in the order they were
    // sent: the first opens the object, each one after starts where the one before ended.
    std::vector<std::uint64_t> offsets;
    int consecutive = 0;
    for (const auto& c : requests.calls) {
      offsets.push_back(c.offset);
      consecutive += c.consecutive && c.sequential;
    }
    std::sort(offsets.begin(), offsets.end());
    CHECK(offsets == std::vector<std::uint64_t>{0, part, 2 * part, 3 * part, 4 * part, 5 * part});
    CHECK(consecutive == 5);
  }
}

TEST_CASE("S3: a small new object is a multipart upload of one part, as s3torchconnector writes it", "[.s3]") {
  s3::Client client(endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  const std::vector<char> bytes = pattern(10'000, 2);
  Requests requests;
  const storage::ScopedObserver observing(&requests);  // gone with the test, whatever it throws
  {
    s3::Upload out(client, bucket, key("tiny.npz"));
    out.write_at(bytes.data(), bytes.size(), 0);
    out.commit();
  }
  storage::set_thread_observer(nullptr);
  REQUIRE(requests.seen.size() == 3);
  CHECK(requests.seen[0].kind == s3::Request::create_upload);
  CHECK(requests.seen[1].kind == s3::Request::upload_part);
  CHECK(requests.seen[1].bytes == bytes.size());
  CHECK(requests.seen[2].kind == s3::Request::complete_upload);
  CHECK(stored(client, bucket, key("tiny.npz"), bytes.size()) == bytes);
}

TEST_CASE("S3: a small new object can be one PUT at commit, invisible before it and never sent when dropped", "[.s3]") {
  s3::Client client(endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  const std::vector<char> bytes = pattern(10'000, 2);
  const auto one_put = s3::Upload::Parts::put_when_small;
  {
    s3::Upload out(client, bucket, key("dropped.npz"), s3::kPartBytes, one_put);
    out.write_at(bytes.data(), bytes.size(), 0);
  }
  CHECK_FALSE(client.size_of(bucket, key("dropped.npz")));
  s3::Upload out(client, bucket, key("small.npz"), s3::kPartBytes, one_put);
  out.write_at(bytes.data() + 100, bytes.size() - 100, 100);
  out.write_at(bytes.data(), 100, 0);  // a header patched last
  CHECK_FALSE(client.size_of(bucket, key("small.npz")));
  out.commit();
  CHECK(out.parts_sent() == 1);
  CHECK(stored(client, bucket, key("small.npz"), bytes.size()) == bytes);
}

TEST_CASE("S3: a large new object is a multipart upload, whole under its key only once completed", "[.s3]") {
  s3::Client client(endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  const std::size_t part = s3::kMinPartBytes;
  const std::vector<char> bytes = pattern(2 * part + 12'345, 3);
  s3::Upload out(client, bucket, key("multipart.bin"), part, s3::Upload::Parts::always_multipart, 1);
  for (std::size_t at = 64; at < bytes.size(); at += 1'000'000)
    out.write_at(bytes.data() + at, std::min<std::size_t>(1'000'000, bytes.size() - at), at);
  out.write_at(bytes.data(), 64, 0);  // the header, known last
  CHECK(out.parts_sent() == 1);  // part 2 went out once a write went beyond it; part 1 waits for the header
  CHECK_FALSE(client.size_of(bucket, key("multipart.bin")));
  out.commit();
  CHECK(out.parts_sent() == 3);
  CHECK(client.size_of(bucket, key("multipart.bin")) == bytes.size());
  CHECK(stored(client, bucket, key("multipart.bin"), bytes.size()) == bytes);
  leave_for_crosscheck("multipart.bin", key("multipart.bin"), bytes);

  // The last part written takes a patch too (a zip's last local header); a part already sent
  // cannot, and rewriting it is a writer's bug, reported as such.
  s3::Upload late(client, bucket, key("late.bin"), part);
  std::vector<char> more = pattern(3 * part, 4);
  late.write_at(more.data(), 2 * part, 0);
  more[part + 10] = 'P';
  late.write_at("P", 1, part + 10);  // part 2 is full but not sent yet
  late.write_at(more.data() + 2 * part, part, 2 * part);
  CHECK_THROWS_AS(late.write_at("x", 1, part + 1), Error);
  late.commit();
  CHECK(stored(client, bucket, key("late.bin"), more.size()) == more);
}

TEST_CASE("S3: an upload's parts go out several at a time, and the object is whole", "[.s3]") {
  s3::Client client(endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  const std::size_t part = s3::kMinPartBytes;
  const std::vector<char> bytes = pattern(5 * part + 777, 9);
  for (const int in_flight : {1, 4}) {
    INFO(in_flight << " parts in flight");
    Requests requests;
    const storage::ScopedObserver observing(&requests);  // gone with the test, whatever it throws
    const std::string name = key("parallel-" + std::to_string(in_flight) + ".bin");
    s3::Upload out(client, bucket, name, part, s3::Upload::Parts::always_multipart, in_flight);
    for (std::size_t at = 0; at < bytes.size(); at += 300'000)
      out.write_at(bytes.data() + at, std::min<std::size_t>(300'000, bytes.size() - at), at);
    out.commit();
    storage::set_thread_observer(nullptr);
    std::vector<storage::RequestEvent> parts;
    for (const auto& r : requests.seen)
      if (r.kind == s3::Request::upload_part) parts.push_back(r);
    REQUIRE(parts.size() == 6);
    // Each part is a write at its own offset (part 1, kept for the header, last of all).
    std::vector<std::uint64_t> offsets;
    for (const auto& c : requests.calls)
      if (c.op == storage::Op::write) offsets.push_back(c.offset);
    std::sort(offsets.begin(), offsets.end());
    CHECK(offsets == std::vector<std::uint64_t>{0, part, 2 * part, 3 * part, 4 * part, 5 * part});
    const int overlapping = overlapping_pairs(parts);
    if (in_flight == 1) CHECK(overlapping == 0);
    else CHECK(overlapping > 0);
    CHECK(stored(client, bucket, name, bytes.size()) == bytes);
  }
}

TEST_CASE("S3: a multipart upload dropped before commit is aborted and leaves no object", "[.s3]") {
  s3::Client client(endpoint());
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  Requests requests;
  const storage::ScopedObserver observing(&requests);  // gone with the test, whatever it throws
  {
    s3::Upload out(client, bucket, key("aborted.bin"), s3::kMinPartBytes);
    const std::vector<char> bytes = pattern(3 * s3::kMinPartBytes, 5);
    out.write_at(bytes.data(), bytes.size(), 0);
  }
  storage::set_thread_observer(nullptr);
  // s3rver answers AbortMultipartUpload with 405 (it does not implement it): the abort is sent, and
  // its failure is not the error that matters. The parts stay invisible either way.
  CHECK(requests.seen.back().kind == s3::Request::abort_upload);
  CHECK(requests.seen.back().attempts == 1);
  if (models("abort")) CHECK(requests.seen.back().status == 204);
  if (models("list_uploads")) CHECK(client.uploads_of(bucket, key("aborted.bin")).empty());
  CHECK_FALSE(client.size_of(bucket, key("aborted.bin")));
}

TEST_CASE("S3: wrong credentials, a missing bucket or object, and a server that is down are one clear error each", "[.s3]") {
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  std::vector<char> buffer(16);
  SECTION("wrong access key") {
    if (!models("access_keys")) return;  // moto takes any
    s3::Endpoint e = endpoint();
    e.credentials.access_key_id = "WRONG";
    s3::Client client(e);
    try {
      client.get(bucket, key("any"), buffer);
      FAIL("a wrong access key was taken");
    } catch (const Error& err) {
      CHECK(err.kind() == ErrorKind::io);
      CHECK_THAT(err.what(), Catch::Contains("403") && Catch::Contains("InvalidAccessKeyId"));
      CHECK_THAT(err.hint(), Catch::Contains("access_key_id"));
    }
  }
  SECTION("wrong secret (s3rver and moto do not check signatures)") {
    if (!models("signatures")) return;
    s3::Endpoint e = endpoint();
    e.credentials.secret_access_key = "wrong";
    s3::Client client(e);
    try {
      client.get(bucket, key("any"), buffer);
      FAIL("a wrong secret was taken");
    } catch (const Error& err) {
      CHECK(err.kind() == ErrorKind::io);
      CHECK_THAT(err.what(), Catch::Contains("403") && Catch::Contains("SignatureDoesNotMatch"));
      CHECK_THAT(err.hint(), Catch::Contains("secret_access_key"));
    }
  }
  SECTION("missing bucket") {
    s3::Client client(endpoint());
    try {
      client.get("no-such-bucket", "x", buffer);
      FAIL("a missing bucket answered");
    } catch (const Error& err) {
      CHECK_THAT(err.what(), Catch::Contains("NoSuchBucket"));
      CHECK_THAT(err.hint(), Catch::Contains("no-such-bucket"));
    }
  }
  SECTION("missing object") {
    s3::Client client(endpoint());
    try {
      client.get(bucket, key("never-written.npz"), buffer);
      FAIL("a missing object answered");
    } catch (const Error& err) {
      CHECK(err.kind() == ErrorKind::data);
      CHECK_THAT(err.what(), Catch::Contains("s3://" + bucket + "/" + key("never-written.npz")));
    }
  }
  SECTION("an object larger than the plan says") {
    s3::Client client(endpoint());
    const std::vector<char> bytes = pattern(100, 6);
    client.put(bucket, key("big.bin"), bytes);
    CHECK_THROWS_AS(client.get(bucket, key("big.bin"), buffer), Error);
  }
  SECTION("nothing listening") {
    s3::Endpoint e = endpoint();
    e.url = "http://127.0.0.1:9";  // discard: nothing listens there
    e.max_attempts = 3;
    s3::Client client(e);
    const std::int64_t t0 = util::now_ns();
    try {
      client.check_bucket(bucket);
      FAIL("an endpoint with nothing listening answered");
    } catch (const Error& err) {
      CHECK(err.kind() == ErrorKind::io);
      CHECK_THAT(err.what(), Catch::Contains("after 3 attempt(s)"));
      CHECK_THAT(err.hint(), Catch::Contains("endpoint_url"));
    }
    CHECK(util::ns_to_s(util::now_ns() - t0) < 5);  // retried with back-off, not hung
  }
}

TEST_CASE("S3: answers that may succeed later (503 SlowDown) are retried with back-off, up to s3_max_attempts",
          "[.s3-faults]") {
  s3::Endpoint e = endpoint();
  const std::string bucket = env("TRAINIO_S3_BUCKET");
  const std::vector<char> bytes = pattern(1000, 7);
  trainio::test::add_fault(R"({"op": "PutObject", "key": "slow-", "fault": "slow_down", "retry_after": 0,
                              "times": 2, "per_key": true})");
  Requests requests;
  const storage::ScopedObserver observing(&requests);  // gone with the test, whatever it throws
  e.max_attempts = 3;
  s3::Client patient(e);
  patient.put(bucket, key("slow-third-time-lucky"), bytes);
  e.max_attempts = 2;
  s3::Client impatient(e);
  try {
    impatient.put(bucket, key("slow-given-up"), bytes);
    FAIL("a request that failed every try succeeded");
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::io);
    CHECK_THAT(err.what(), Catch::Contains("503") && Catch::Contains("SlowDown") && Catch::Contains("after 2 attempts"));
    CHECK_THAT(err.hint(), Catch::Contains("s3_max_attempts"));
  }
  storage::set_thread_observer(nullptr);
  trainio::test::clear_faults();
  REQUIRE(requests.seen.size() == 2);
  CHECK(requests.seen[0].attempts == 3);
  CHECK(requests.seen[0].status == 200);
  CHECK(requests.seen[0].total_ns > 300'000'000);  // waited 0.1 s, then 0.2 s
  CHECK(requests.seen[1].attempts == 2);
  CHECK(requests.seen[1].status == 503);
  CHECK(stored(patient, bucket, key("slow-third-time-lucky"), bytes.size()) == bytes);
}
