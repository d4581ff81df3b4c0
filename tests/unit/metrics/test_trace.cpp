#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "metrics/trace.hpp"
#include "storage/io_observer.hpp"

namespace trace = trainio::metrics::trace;
using nlohmann::json;
using trainio::storage::OpEvent;

namespace {

struct Text {
  std::string text;
  bool committed = false;
};

class MemorySink final : public trace::Sink {
 public:
  explicit MemorySink(Text& out) : out_(out) {}
  void write(std::string_view text) override { out_.text += text; }
  void commit() override { out_.committed = true; }

 private:
  Text& out_;
};

// The events by the documented rule: a "[" line, one JSON object per line, a "]" line.
std::vector<json> events_of(const Text& t) {
  REQUIRE(t.committed);
  REQUIRE(t.text.starts_with("[\n"));
  REQUIRE(t.text.ends_with("\n]"));
  std::vector<json> events;
  std::istringstream in(t.text.substr(2, t.text.size() - 4));
  for (std::string line; std::getline(in, line);) events.push_back(json::parse(line));
  return events;
}

// A time as written (microseconds, three decimals) in nanoseconds.
std::int64_t ns_of(const json& v) { return std::llround(v.get<double>() * 1000); }

OpEvent call_on(const std::string& path, std::int64_t start_ns) {
  OpEvent e;
  e.op = trainio::storage::Op::read;
  e.bytes = 4096;
  e.start_ns = start_ns;
  e.ns = 1234;
  e.file = trainio::storage::path_hash(path);
  e.path = path;
  return e;
}

// Times count from now, as in a run: a run's times are exact to the nanosecond for 26 days.
std::int64_t start_into(Text& t, std::uint64_t every = 1) {
  const std::int64_t origin = trace::wall_clock_us();
  trace::start(std::make_unique<MemorySink>(t), trace::Process{3, "node-7", origin}, every);
  return origin;
}

}  // namespace

TEST_CASE("trace: framed lines of JSON objects, rank metadata first, times in nanoseconds from the origin") {
  Text t;
  trace::name_thread("main (training loop)");
  const std::int64_t origin = start_into(t);
  trace::span("step", "train", 5'000'000'001, 5'000'001'235, R"("epoch":1)");
  trace::span("compute", "accelerator", 5'000'000'500, 5'000'000'999);
  trace::finish();
  const auto events = events_of(t);
  REQUIRE(events.size() == 8);
  CHECK(events[0]["name"] == "process_name");
  CHECK(events[0]["args"]["name"] == "rank 3 on host node-7");
  CHECK(events[1]["name"] == "process_sort_index");
  CHECK(events[1]["args"]["sort_index"] == 3);
  CHECK(events[2]["args"] == json{{"name", "rank"}, {"value", 3}});
  CHECK(events[3]["args"] == json{{"name", "hostname"}, {"value", "node-7"}});
  CHECK(events[4]["args"] == json{{"name", "time_origin_unix_us"}, {"value", origin}});
  CHECK(events[5]["name"] == "thread_name");
  CHECK(events[5]["args"]["name"] == "main (training loop)");
  CHECK(events[5]["tid"] == events[6]["tid"]);
  for (const auto& e : events) CHECK(e["pid"] == 3);
  const auto& step = events[6];
  const auto& compute = events[7];
  CHECK(ns_of(step["dur"]) == 1234);
  CHECK(ns_of(compute["dur"]) == 499);
  CHECK(ns_of(compute["ts"]) - ns_of(step["ts"]) == 499);  // to the nanosecond
  CHECK(step["args"]["epoch"] == 1);
  // Three decimals as written, not rounded away by a double.
  CHECK(t.text.find(R"("dur":1.234,)") != std::string::npos);
  CHECK(t.text.find(R"("dur":0.499,)") != std::string::npos);
}

TEST_CASE("trace: each thread is named before its first event, an unnamed one by its id") {
  Text t;
  start_into(t);
  std::thread named([] {
    trace::name_thread("reader 0");
    trace::storage_call(call_on("data/a.npz", 10'000));
  });
  named.join();
  std::thread unnamed([] { trace::span("x", "y", 1, 2); });
  unnamed.join();
  trace::finish();
  std::map<long, std::string> names;
  for (const auto& e : events_of(t)) {
    if (e["name"] == "thread_name") {
      CHECK(names.count(e["tid"]) == 0);
      names[e["tid"]] = e["args"]["name"];
    } else if (e["ph"] == "X") {
      REQUIRE(names.count(e["tid"]) == 1);  // its name came first
    }
  }
  REQUIRE(names.size() == 2);
  std::vector<std::string> values;
  for (const auto& [tid, name] : names) values.push_back(name == "reader 0" ? name : name.substr(0, 7));
  std::sort(values.begin(), values.end());
  CHECK(values == std::vector<std::string>{"reader 0", "thread "});
}

TEST_CASE("trace: a file's hash is named (FH) once per thread, by the path it stands for, before its calls") {
  Text t;
  start_into(t);
  trace::storage_call(call_on("data/train/img_1.npz", 1000));
  trace::storage_call(call_on("data/train/img_1.npz", 3000));
  trace::storage_call(call_on("ck/.model.pt.trainio-tmp", 5000));  // written under a temporary name
  trace::storage_call(call_on("odd \"name\"\\\n.npz", 7000));
  trace::finish();
  std::vector<std::pair<std::string, std::string>> named;  // path, hash
  std::size_t calls = 0;
  for (const auto& e : events_of(t)) {
    if (e["name"] == "FH") {
      named.emplace_back(e["args"]["name"], e["args"]["value"]);
    } else if (e["cat"] == "POSIX") {
      ++calls;
      const std::string hash = e["args"]["fhash"];
      CHECK(std::any_of(named.begin(), named.end(), [&](const auto& n) { return n.second == hash; }));
    }
  }
  CHECK(calls == 4);
  REQUIRE(named.size() == 3);
  CHECK(named[0].first == "data/train/img_1.npz");
  CHECK(named[1].first == "ck/model.pt");
  CHECK(named[2].first == "odd \"name\"\\\n.npz");  // escaped in the file, whole when read
  for (const auto& [path, hash] : named)
    CHECK(hash == fmt::format("{:016x}", trainio::storage::path_hash(path)));
}

TEST_CASE("trace: with one call in every N written, only written calls' files are named") {
  Text t;
  start_into(t, 2);
  for (int i = 0; i < 4; ++i) trace::storage_call(call_on(fmt::format("data/f{}.npz", i), 1000 * i));
  trace::finish();
  std::vector<std::string> named, used;
  for (const auto& e : events_of(t)) {
    if (e["name"] == "FH") named.push_back(e["args"]["name"]);
    if (e["cat"] == "POSIX") used.push_back(e["args"]["fhash"]);
  }
  CHECK(named == std::vector<std::string>{"data/f0.npz", "data/f2.npz"});
  CHECK(used.size() == 2);
}
