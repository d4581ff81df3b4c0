#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "config/workload.hpp"
#include "engine/load/batch_wait.hpp"
#include "engine/load/loader.hpp"
#include "util/clock.hpp"
#include "util/host_info.hpp"
#include "util/proc_stats.hpp"
#include "util/wait_policy.hpp"

using namespace trainio;
using engine::BatchWait;
using namespace std::chrono_literals;

namespace {

// What a loader shares with its training loop: a lock, a condition, and the state it guards.
struct Loader {
  std::mutex mutex;
  std::condition_variable cv;
  bool ready = false;
  std::atomic<bool> returned{false};
};

}  // namespace

TEST_CASE("a batch that is ready costs the training loop no polling", "[pipeline]") {
  Loader l;
  BatchWait wait;
  std::unique_lock lock(l.mutex);
  l.ready = true;
  wait.wait(lock, l.cv, [&] { return l.ready; });
  CHECK(lock.owns_lock());
  CHECK(wait.take_polling_cpu_ns() == 0);
}

TEST_CASE("a polling training loop sees its batch without being woken", "[pipeline]") {
  // The reader makes the batch ready and says so, but the condition it notifies is not the one the
  // waiter blocks on: a waiter that had blocked would stay asleep; a polling one returns. The
  // budget is long enough for any load.
  Loader l;
  BatchWait wait(std::chrono::nanoseconds(60s).count());
  std::atomic<bool> asked{false};
  std::thread waiter([&] {
    std::unique_lock lock(l.mutex);
    wait.wait(lock, l.cv, [&] {
      asked = true;
      return l.ready;
    });
    CHECK(lock.owns_lock());
    l.returned = true;
  });
  while (!asked) std::this_thread::yield();
  {  // taken once the waiter has let go of the lock to poll
    std::lock_guard lock(l.mutex);
    l.ready = true;
    std::condition_variable elsewhere;  // not the one the waiter would block on
    wait.signal(elsewhere);
  }
  for (int i = 0; i < 3000 && !l.returned; ++i) std::this_thread::sleep_for(10ms);
  CHECK(l.returned);
  if (!l.returned) {  // do not hang the suite: wake it the usual way
    std::lock_guard lock(l.mutex);
    l.cv.notify_all();
  }
  waiter.join();
  CHECK(wait.take_polling_cpu_ns() > 0);
  CHECK(wait.take_polling_cpu_ns() == 0);  // taken
}

TEST_CASE("progress that is not the awaited batch keeps the training loop waiting", "[pipeline]") {
  Loader l;
  int batches_done = 0;  // the waiter wants the third
  BatchWait wait(std::chrono::nanoseconds(60s).count());
  std::thread waiter([&] {
    std::unique_lock lock(l.mutex);
    wait.wait(lock, l.cv, [&] { return batches_done >= 3; });
    CHECK(batches_done >= 3);
    l.returned = true;
  });
  for (int b = 0; b < 2; ++b) {
    std::this_thread::sleep_for(10ms);
    std::lock_guard lock(l.mutex);
    ++batches_done;
    wait.signal(l.cv);
  }
  std::this_thread::sleep_for(50ms);
  CHECK_FALSE(l.returned);
  {
    std::lock_guard lock(l.mutex);
    ++batches_done;
    wait.signal(l.cv);
  }
  waiter.join();
  CHECK(l.returned);
}

TEST_CASE("a long wait stops polling at its budget and blocks until notified", "[pipeline]") {
  // 1 ms of polling, then the batch comes 200 ms later with a notify: the polling CPU is about the
  // budget (yields on a busy machine make it less), nowhere near the whole wait.
  Loader l;
  BatchWait wait(1'000'000);
  std::int64_t waited_ns = 0;
  std::thread waiter([&] {
    const std::int64_t start = util::now_ns();
    std::unique_lock lock(l.mutex);
    wait.wait(lock, l.cv, [&] { return l.ready; });
    waited_ns = util::now_ns() - start;
  });
  std::this_thread::sleep_for(200ms);
  {
    std::lock_guard lock(l.mutex);
    l.ready = true;
    wait.signal(l.cv);
  }
  waiter.join();
  const std::int64_t polled = wait.take_polling_cpu_ns();
  CHECK(polled > 0);
  CHECK(polled < waited_ns / 4);
}

TEST_CASE("the training loop polls only with a core to spare for it", "[pipeline]") {
  CHECK(BatchWait::polling_budget_ns(1, 2, false) == util::WaitPolicy::yield_ns);  // a reader and the loop
  CHECK(BatchWait::polling_budget_ns(2, 2, false) == 0);  // readers on every core: the loop blocks
  CHECK(BatchWait::polling_budget_ns(7, 8, false) == util::WaitPolicy::yield_ns);
  CHECK(BatchWait::polling_budget_ns(1, 1, false) == 0);
}

TEST_CASE("the training loop never polls for O_DIRECT reads", "[pipeline]") {
  // Their readers wait on the device, so waking the loop costs them nothing they would use.
  CHECK(BatchWait::polling_budget_ns(1, 2, true) == 0);
  CHECK(BatchWait::polling_budget_ns(7, 64, true) == 0);
}

TEST_CASE("without a budget the training loop blocks at once and polls nothing", "[pipeline]") {
  Loader l;
  BatchWait wait;
  std::thread waiter([&] {
    std::unique_lock lock(l.mutex);
    wait.wait(lock, l.cv, [&] { return l.ready; });
  });
  std::this_thread::sleep_for(20ms);
  {
    std::lock_guard lock(l.mutex);
    l.ready = true;
    wait.signal(l.cv);
  }
  waiter.join();
  CHECK(wait.take_polling_cpu_ns() == 0);
}

TEST_CASE("a rank alone counts the cores of its affinity", "[pipeline]") {
  // Ranks that share a host and a set of CPUs: tests/mpi/test_comm.cpp.
  const std::size_t alone = engine::cores_of_rank(engine::rank_cores(mpi::Comm::solo()));
  CHECK(alone == static_cast<std::size_t>(std::max(1, util::cores_available())));
  CHECK(alone <= static_cast<std::size_t>(util::host_info().cpu_count));
}

TEST_CASE("the training loop spins out its compute only with a core of its own", "[pipeline]") {
  config::Workload w;
  w.reader.data_loader = config::DataLoader::pytorch;
  w.reader.read_threads = 1;
  CHECK(engine::loop_has_a_core(w, 2.0));    // one reader and the loop on two cores
  CHECK_FALSE(engine::loop_has_a_core(w, 1.0));
  w.reader.read_threads = 0;                  // the loop reads itself
  CHECK(engine::loop_has_a_core(w, 1.0));
  CHECK_FALSE(engine::loop_has_a_core(w, 0.5));  // two ranks on one CPU
  w.reader.read_threads = 1;
  w.reader.odirect = true;                    // the reads' completions want the cores
  CHECK_FALSE(engine::loop_has_a_core(w, 8.0));
  w.reader.odirect = false;
  w.reader.data_loader = config::DataLoader::tensorflow;
  w.dataset.format = config::Format::tfrecord;  // a stream thread per slot and the pipeline's
  CHECK_FALSE(engine::loop_has_a_core(w, 2.0));
  CHECK(engine::loop_has_a_core(w, 3.0));
}

TEST_CASE("a wait that outlasted half the budget makes the next one block, and a short one polls again", "[pipeline]") {
  // Budget 1 s: a batch after 600 ms is a long wait (polled, then seen), the next wait blocks at
  // once (batches take longer than polling covers) and is short, so the one after polls again.
  Loader l;
  BatchWait wait(std::chrono::nanoseconds(1s).count());
  auto one_wait = [&](std::chrono::milliseconds batch_after) {
    {
      std::lock_guard lock(l.mutex);
      l.ready = false;
    }
    std::thread reader([&] {
      std::this_thread::sleep_for(batch_after);
      std::lock_guard lock(l.mutex);
      l.ready = true;
      wait.signal(l.cv);
    });
    {
      std::unique_lock lock(l.mutex);
      wait.wait(lock, l.cv, [&] { return l.ready; });
    }
    reader.join();
    return wait.take_polling_cpu_ns();
  };
  CHECK(one_wait(600ms) > 0);
  CHECK(one_wait(50ms) == 0);
  CHECK(one_wait(50ms) > 0);
}
