#include <catch2/catch.hpp>

#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/overlap_thread.hpp"
#include "util/error.hpp"

using namespace trainio;

TEST_CASE("an overlap thread runs each task beside the caller, all on one thread", "[engine]") {
  engine::OverlapThread beside;
  std::vector<std::thread::id> ran_on;
  for (int i = 0; i < 5; ++i) {
    auto task = [&] { ran_on.push_back(std::this_thread::get_id()); };
    beside.start(task);
    beside.wait();
  }
  REQUIRE(ran_on.size() == 5);
  CHECK(ran_on.front() != std::this_thread::get_id());
  for (const auto& id : ran_on) CHECK(id == ran_on.front());  // one thread, not one per task
}

TEST_CASE("an overlap thread hands a task's exception to wait() and goes on serving", "[engine]") {
  engine::OverlapThread beside;
  auto fail = [] { throw std::runtime_error("generator failed"); };
  beside.start(fail);
  CHECK_THROWS_WITH(beside.wait(), "generator failed");
  int ran = 0;
  auto count = [&] { ++ran; };
  beside.start(count);
  beside.wait();
  CHECK(ran == 1);
}

TEST_CASE("an overlap thread refuses a second task before the first was waited for", "[engine]") {
  engine::OverlapThread beside;
  auto nothing = [] {};
  beside.start(nothing);
  CHECK_THROWS_AS(beside.start(nothing), Error);
  beside.wait();
}
