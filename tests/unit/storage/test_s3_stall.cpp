// S3 requests to a server that accepts connections and never answers (a frozen one): the stall
// watchdog sees each request, the single ones and those in flight together, by method and object,
// and under a watchdog each try gives up within its timeout instead of the client's 60 s.

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "storage/in_flight.hpp"
#include "storage/s3/s3_client.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

using namespace trainio;

namespace {

// Listens on a loopback port, accepts, reads what comes and never answers.
class FrozenServer {
 public:
  FrozenServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listener_, 16) == 0);
    socklen_t len = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (true) {
        const int c = ::accept(listener_, nullptr, nullptr);
        if (c < 0 || stopping_) {
          if (c >= 0) ::close(c);
          return;
        }
        clients_.push_back(c);  // kept open, never answered
      }
    });
  }
  ~FrozenServer() {
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
    for (const int c : clients_) ::close(c);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::vector<int> clients_;
  std::thread thread_;
};

// The call another thread has had in flight for at least `age_s`, looked for until `within_s`.
std::optional<storage::CallInFlight> seen_in_flight(double age_s, double within_s) {
  const std::int64_t until = util::now_ns() + static_cast<std::int64_t>(within_s * 1e9);
  while (util::now_ns() < until) {
    if (auto call = storage::call_in_flight_since(util::now_ns() - static_cast<std::int64_t>(age_s * 1e9))) return call;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("S3 requests to a frozen server are watched, and each try ends within the watchdog's timeout") {
  FrozenServer server;
  storage::set_stall_timeout(1);  // as a watchdog of 1 s publishes it
  storage::s3::Endpoint e;
  e.url = server.url();
  e.credentials = {"AK", "SK", ""};
  e.max_attempts = 2;
  std::vector<char> buffer(1024);
  const std::string bucket = "bucket", key = "train/img_1.npz";

  SECTION("a single request, its retries included") {
    std::string error;
    const std::int64_t start = util::now_ns();
    std::thread reader([&] {
      storage::s3::Client client(e);
      try {
        client.get(bucket, key, {buffer.data(), buffer.size()});
      } catch (const Error& err) {
        error = err.what();
      }
    });
    const auto seen = seen_in_flight(0.5, 5);
    reader.join();
    const double seconds = static_cast<double>(util::now_ns() - start) * 1e-9;
    REQUIRE(seen);
    CHECK(seen->op == storage::Op::read);
    CHECK(seen->path == "s3://bucket/train/img_1.npz");
    CHECK(error.find("no answer") != std::string::npos);
    CHECK(error.find("after 2 attempt(s)") != std::string::npos);
    CHECK(seconds < 8);  // 2 tries of 1 s without a byte, not of 60 s
  }

  SECTION("parts in flight together") {
    std::string error;
    std::thread writer([&] {
      storage::s3::Client client(e);
      std::vector<std::pair<int, std::string>> etags;
      // Parts of a byte: curl's speed is an average over its last 5 s, so a part of 1 KiB sent
      // at once would keep a try above 1 byte/s for 5 s more.
      try {
        client.upload_part_async(bucket, key, "upload-1", 1, {buffer.data(), 1}, 0, 1, etags);
        // One in flight already: this waits for it (Client::complete_one).
        client.upload_part_async(bucket, key, "upload-1", 2, {buffer.data(), 1}, 1, 1, etags);
      } catch (const Error& err) {
        error = err.what();
      }
    });
    const auto seen = seen_in_flight(0.5, 5);
    writer.join();
    REQUIRE(seen);
    CHECK(seen->op == storage::Op::write);
    CHECK(seen->path == "s3://bucket/train/img_1.npz");
    CHECK(error.find("no answer") != std::string::npos);
  }
  storage::set_stall_timeout(0);
}
