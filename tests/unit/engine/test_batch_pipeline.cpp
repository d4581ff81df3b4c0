#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/load/batch_pipeline.hpp"

using namespace trainio;
using engine::Batch;
using engine::BatchPipeline;
using Assignment = BatchPipeline::Assignment;
using namespace std::chrono_literals;

namespace {

// What the workers did, shared with the test thread.
struct Log {
  std::mutex mutex;
  std::vector<std::uint64_t> batches;        // in the order reads started
  std::set<std::pair<std::uint64_t, std::uint64_t>> parts;
  std::vector<std::size_t> worker_of_batch = std::vector<std::size_t>(64, ~std::size_t{0});
  std::atomic<int> in_flight{0}, started{0};
};

// A gate reads wait at until the test opens it.
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  void wait() {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return open; });
  }
  void release() {
    {
      std::lock_guard lock(mutex);
      open = true;
    }
    cv.notify_all();
  }
};

BatchPipeline::ReadPart recording(Log& log, Gate* gate = nullptr) {
  // Batch b, part p: 1 sample of b * 1000 + p bytes, so the sums show that every part arrived.
  return [&log, gate](std::size_t worker, std::uint64_t batch, std::uint64_t part, std::uint64_t) {
    ++log.started;
    ++log.in_flight;
    {
      std::lock_guard lock(log.mutex);
      log.batches.push_back(batch);
      log.parts.insert({batch, part});
      if (batch < log.worker_of_batch.size()) log.worker_of_batch[batch] = worker;
    }
    if (gate) gate->wait();
    --log.in_flight;
    return Batch{1, batch * 1000 + part};
  };
}

// Waits (up to 5 s) until `done` holds; the tests then check that nothing more happens.
template <typename Pred>
bool eventually(Pred done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(10ms);
  return done();
}

}  // namespace

TEST_CASE("batches reach the training loop in order, batch b read by worker b % workers", "[pipeline]") {
  Log log;
  BatchPipeline p(3, 6, Assignment::worker_per_batch, recording(log));
  p.start(20);
  for (std::uint64_t b = 0; b < 20; ++b) {
    const Batch got = p.next();
    CHECK(got.bytes == b * 1000);
  }
  p.finish();
  for (std::uint64_t b = 0; b < 20; ++b) CHECK(log.worker_of_batch[b] == b % 3);
  CHECK(log.batches.size() == 20);
  CHECK_THROWS_WITH(p.next(), Catch::Contains("more batches than the epoch has"));
}

TEST_CASE("no more than the window is read ahead of the training loop", "[pipeline]") {
  for (const Assignment a : {Assignment::worker_per_batch, Assignment::shared_queue}) {
    Log log;
    BatchPipeline p(4, 5, a, recording(log));
    p.start(100, a == Assignment::shared_queue ? 2 : 1);
    const int per_batch = a == Assignment::shared_queue ? 2 : 1;
    REQUIRE(eventually([&] { return log.started == 5 * per_batch; }));
    std::this_thread::sleep_for(50ms);
    CHECK(log.started == 5 * per_batch);  // batches 0..4 read, 5 waits for a free slot
    p.next();
    REQUIRE(eventually([&] { return log.started == 6 * per_batch; }));
    std::this_thread::sleep_for(50ms);
    CHECK(log.started == 6 * per_batch);
    p.finish();
  }
}

TEST_CASE("a shared queue reads every part of every batch once and adds the parts up", "[pipeline]") {
  Log log;
  BatchPipeline p(3, 2, Assignment::shared_queue, recording(log));
  p.start(10, 3);
  for (std::uint64_t b = 0; b < 10; ++b) {
    const Batch got = p.next();
    CHECK(got.samples == 3);
    CHECK(got.bytes == 3 * b * 1000 + 0 + 1 + 2);
  }
  p.finish();
  CHECK(log.parts.size() == 30);
  CHECK(log.batches.size() == 30);
}

TEST_CASE("a read's error reaches the training loop with its batch, and later batches still come", "[pipeline]") {
  for (const Assignment a : {Assignment::worker_per_batch, Assignment::shared_queue}) {
    BatchPipeline p(2, 4, a, [](std::size_t, std::uint64_t batch, std::uint64_t, std::uint64_t) {
      if (batch == 3) throw std::runtime_error("cannot read batch 3");
      return Batch{1, batch};
    });
    p.start(6, 2);
    for (std::uint64_t b = 0; b < 3; ++b) CHECK(p.next().bytes == (a == Assignment::shared_queue ? 2 * b : b));
    CHECK_THROWS_WITH(p.next(), "cannot read batch 3");
    CHECK(p.next().samples >= 1);
    p.finish();
  }
}

TEST_CASE("finish() mid-phase waits for the reads in flight and starts no new one", "[pipeline]") {
  Log log;
  Gate gate;
  BatchPipeline p(2, 4, Assignment::worker_per_batch, recording(log, &gate));
  p.start(50);
  REQUIRE(eventually([&] { return log.in_flight == 2; }));
  std::atomic<bool> finished{false};
  std::thread t([&] {
    p.finish();
    finished = true;
  });
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(finished);  // two reads are still in flight
  gate.release();
  t.join();
  CHECK(log.in_flight == 0);
  const int after = log.started;
  std::this_thread::sleep_for(50ms);
  CHECK(log.started == after);
  CHECK(after <= 4);
}

TEST_CASE("a phase after a finished one starts afresh", "[pipeline]") {
  Log log;
  BatchPipeline p(2, 2, Assignment::worker_per_batch, recording(log));
  p.start(10);
  p.next();
  p.finish();  // the epoch ends early (a time limit)
  p.start(3);
  for (std::uint64_t b = 0; b < 3; ++b) CHECK(p.next().bytes == b * 1000);
  p.finish();
}

TEST_CASE("the pipeline can be destroyed with reads in flight: it waits for them", "[pipeline]") {
  Log log;
  Gate gate;
  std::atomic<bool> destroyed{false};
  {
    auto p = std::make_unique<BatchPipeline>(3, 3, Assignment::shared_queue, recording(log, &gate));
    p->start(10, 3);
    REQUIRE(eventually([&] { return log.in_flight == 3; }));
    std::thread t([&] {
      p.reset();
      destroyed = true;
    });
    std::this_thread::sleep_for(50ms);
    CHECK_FALSE(destroyed);
    gate.release();
    t.join();
  }
  CHECK(log.in_flight == 0);
}

TEST_CASE("with no workers the training thread reads each batch when it asks", "[pipeline]") {
  Log log;
  const auto caller = std::this_thread::get_id();
  std::thread::id reader;
  BatchPipeline p(0, 8, Assignment::worker_per_batch, [&](std::size_t, std::uint64_t batch, std::uint64_t, std::uint64_t) {
    reader = std::this_thread::get_id();
    ++log.started;
    return Batch{1, batch};
  });
  p.start(3);
  std::this_thread::sleep_for(20ms);
  CHECK(log.started == 0);
  CHECK(p.next().bytes == 0);
  CHECK(reader == caller);
  CHECK(log.started == 1);
}
