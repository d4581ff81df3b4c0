// report::Reporters (report/reporter.hpp): each event reaches every reporter of the list, in the
// order they were added (the result files' order at the end depends on it); a null one is skipped.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "report/reporter.hpp"

using namespace trainio;

namespace {
class Log final : public report::Reporter {
 public:
  Log(std::string name, std::vector<std::string>& out) : name_(std::move(name)), out_(out) {}
  void epoch_measured(const metrics::EpochRecord& e) override { say("measured epoch " + std::to_string(e.epoch)); }
  void epoch_summarised(const metrics::EpochSummary& s) override { say("summarised epoch " + std::to_string(s.epoch)); }
  void checkpoint_measured(const metrics::CheckpointRecord& c) override { say("measured checkpoint " + std::to_string(c.index)); }
  void checkpoint_summarised(const metrics::CheckpointSummary& s) override {
    say("summarised checkpoint " + std::to_string(s.index));
  }
  void stopped(const std::string& why) override { say("stopped: " + why); }

 private:
  void say(const std::string& what) { out_.push_back(name_ + " " + what); }
  std::string name_;
  std::vector<std::string>& out_;
};
}  // namespace

TEST_CASE("Reporters: every event to every reporter, in the order they were added") {
  std::vector<std::string> heard;
  report::Reporters list;
  Log* first = list.add(std::make_unique<Log>("a", heard));
  CHECK(list.add(std::unique_ptr<Log>()) == nullptr);
  list.add(std::make_unique<Log>("b", heard));
  REQUIRE(first != nullptr);

  metrics::EpochRecord e;
  metrics::EpochSummary es;
  e.epoch = es.epoch = 3;
  metrics::CheckpointRecord c;
  metrics::CheckpointSummary cs;
  c.index = cs.index = 2;
  list.epoch_measured(e);
  list.epoch_summarised(es);
  list.checkpoint_measured(c);
  list.checkpoint_summarised(cs);
  list.generated(metrics::RunSummary{});  // no reporter here listens: nothing is heard
  list.stopped("SIGTERM");
  CHECK(heard == std::vector<std::string>{"a measured epoch 3", "b measured epoch 3", "a summarised epoch 3",
                                          "b summarised epoch 3", "a measured checkpoint 2", "b measured checkpoint 2",
                                          "a summarised checkpoint 2", "b summarised checkpoint 2", "a stopped: SIGTERM",
                                          "b stopped: SIGTERM"});
}
