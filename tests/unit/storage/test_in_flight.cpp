#include <catch2/catch.hpp>

#include <string>
#include <thread>

#include "engine/stall_watchdog.hpp"
#include "storage/in_flight.hpp"
#include "util/clock.hpp"

using namespace trainio;

TEST_CASE("a storage call is seen in flight from another thread until it returns") {
  const std::string path = "/data/img_1.npz";
  const std::int64_t start = util::now_ns() - 5'000'000'000;  // began 5 s ago
  {
    const storage::InFlightCall call(storage::Op::read, path, start);
    const std::string other = "/data/other";
    const storage::InFlightCall inner(storage::Op::stat, other, util::now_ns());  // nested: the outer call stays
    std::optional<storage::CallInFlight> seen;
    std::thread watcher([&] { seen = storage::call_in_flight_since(util::now_ns() - 1'000'000'000); });
    watcher.join();
    REQUIRE(seen);
    CHECK(seen->op == storage::Op::read);
    CHECK(seen->path == path);
    CHECK(seen->start_ns == start);
    // Younger than the asked age: not reported.
    CHECK_FALSE(storage::call_in_flight_since(start));
  }
  CHECK_FALSE(storage::call_in_flight_since(util::now_ns()));
}

TEST_CASE("the stall message names the call, the file, the rank and the fix") {
  const std::string m = engine::stall_message(3, "read", "/mnt/lustre/img_7.npz", 612.4, 600);
  CHECK(m.find("I/O error (rank 3): read('/mnt/lustre/img_7.npz') has not returned for 612 s (--stall-timeout 600 s)") !=
        std::string::npos);
  CHECK(m.find("\n  fix: ") != std::string::npos);
}

TEST_CASE("the watchdog ends the job once when a call outlives the timeout") {
  const std::string path = "/hung/file";
  std::string message;
  int calls = 0;
  {
    const storage::InFlightCall call(storage::Op::read, path, util::now_ns());
    engine::StallWatchdog watchdog(0.05, 0, [&](const std::string& m) {
      message = m;
      ++calls;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  CHECK(calls == 1);
  CHECK(message.find("read('/hung/file') has not returned") != std::string::npos);
}

TEST_CASE("an S3 request that does not return is named by its method, object and endpoint key") {
  const std::string object = "s3://bucket/prefix/train/img_1_of_8.npz";
  std::string message;
  CHECK(storage::stall_timeout() == 0);
  {
    const storage::InFlightCall call(storage::Op::read, object, util::now_ns());
    engine::StallWatchdog watchdog(0.05, 1, [&](const std::string& m) { message = m; });
    CHECK(storage::stall_timeout() == 0.05);  // what S3 clients made now keep their tries within
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  CHECK(storage::stall_timeout() == 0);
  CHECK(message.find("I/O error (rank 1): S3 GET of '" + object + "' has not returned") != std::string::npos);
  CHECK(message.find("storage.storage_options.endpoint_url") != std::string::npos);
}
