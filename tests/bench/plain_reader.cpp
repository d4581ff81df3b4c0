// The plain reader hot reads are held against where fio cannot do the same work (issue 14): a
// DataLoader's workers reading samples of fixed size, in file order, batch by batch. Worker
// thread t reads batches t, t + THREADS, ... of each epoch. No plan, no timing per sample, no
// records: the least a client can do to make those calls. Prints the wall-clock seconds of all
// epochs. The modes:
//   open          each sample read as DLIO's on_demand readers read it: open the file, one pread,
//                 close;
//   direct        every file opened once with O_DIRECT before the clock starts, one pread per
//                 sample: what trainio's readers do with `reader.odirect`, where fio's jobs cannot
//                 share batches round robin;
//   loop:PREFETCH every file opened once, one pread per sample, and each finished batch handed to
//                 the main thread, the training loop, which takes the batches in order, blocking
//                 on a condition variable until the next is done (what a DataLoader with a
//                 training loop does, and fio's jobs do not); a worker starts a batch only while
//                 fewer than PREFETCH batches are done or being read ahead of the loop;
// each of them into the worker's one page-aligned sample buffer, as trainio's readers read;
//   keep          every file opened once, one pread per sample, into the worker's batch buffer
//                 (BATCH samples side by side, as a collated batch holds them): what reading into
//                 a batch's distinct buffers costs, against fio's one.
//
// Usage: trainio_plain_reader SAMPLE_BYTES SAMPLES_PER_FILE THREADS BATCH EPOCHS open|keep|direct|loop:PREFETCH FILE...

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Job {
  std::vector<std::string> files;
  std::vector<int> kept;  // file descriptors, with `keep`
  long long sample_bytes = 0, per_file = 0, batch = 0, epochs = 0;
  int threads = 1;
  bool open_per_sample = false;
  bool direct = false;
  long long prefetch = 0;  // > 0: a training loop takes the batches (`loop:PREFETCH`)
  // Batches per epoch: the last partial one is dropped, as trainio does.
  long long batches() const { return static_cast<long long>(files.size()) * per_file / batch; }
};

// The hand-over between the workers and the training loop, in `loop` mode.
struct Loop {
  std::mutex mutex;
  std::condition_variable done_cv, room_cv;
  std::vector<char> done;  // batch n of the loop's order is done: done[n % PREFETCH], cleared when taken
  long long taken = 0;     // batches the training loop has taken, over all epochs
  bool failed = false;
};

bool read_sample(const Job& job, long long sample, char* into) {
  const auto file = static_cast<std::size_t>(sample / job.per_file);
  const off_t offset = static_cast<off_t>(sample % job.per_file * job.sample_bytes);
  const int fd = job.open_per_sample ? ::open(job.files[file].c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC) : job.kept[file];
  if (fd < 0) return false;
  const ssize_t n = ::pread(fd, into, static_cast<std::size_t>(job.sample_bytes), offset);
  if (job.open_per_sample) ::close(fd);
  return n == job.sample_bytes;
}

// Worker `t`: batches t, t + threads, ... of every epoch, into one sample buffer (a batch buffer
// with `keep`), each batch handed to the training loop when read (with `loop`).
bool work(const Job& job, int t, Loop& loop) {
  const bool one_buffer = job.open_per_sample || job.direct || job.prefetch > 0;
  const long long buffer_samples = one_buffer ? 1 : job.batch;
  void* memory = nullptr;
  if (posix_memalign(&memory, 4096, static_cast<std::size_t>(buffer_samples * job.sample_bytes)) != 0) return false;
  auto* buffer = static_cast<char*>(memory);
  const long long batches = job.batches();
  bool ok = true;
  for (long long e = 0; e < job.epochs && ok; ++e)
    for (long long b = t; b < batches && ok; b += job.threads) {
      const long long global = e * batches + b;  // the batch's place in the training loop's order
      if (job.prefetch > 0) {
        std::unique_lock lock(loop.mutex);
        loop.room_cv.wait(lock, [&] { return global < loop.taken + job.prefetch || loop.failed; });
        if (loop.failed) break;
      }
      for (long long i = 0; i < job.batch && ok; ++i)
        ok = read_sample(job, b * job.batch + i, buffer + (one_buffer ? 0 : i) * job.sample_bytes);
      if (job.prefetch > 0) {
        {
          const std::lock_guard lock(loop.mutex);
          loop.done[static_cast<std::size_t>(global % job.prefetch)] = 1;
          loop.failed = loop.failed || !ok;
        }
        loop.done_cv.notify_one();
        if (!ok) loop.room_cv.notify_all();
      }
    }
  std::free(memory);
  return ok;
}

// The training loop: takes every batch in order as soon as it is done; false when a worker failed.
bool train(const Job& job, Loop& loop) {
  const long long total = job.epochs * job.batches();
  for (long long next = 0; next < total; ++next) {
    char& done = loop.done[static_cast<std::size_t>(next % job.prefetch)];
    {
      std::unique_lock lock(loop.mutex);
      loop.done_cv.wait(lock, [&] { return done || loop.failed; });
      if (loop.failed) break;
      done = 0;
      ++loop.taken;
    }
    loop.room_cv.notify_all();
  }
  const std::lock_guard lock(loop.mutex);
  return !loop.failed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 8) {
    std::fprintf(stderr, "usage: %s SAMPLE_BYTES SAMPLES_PER_FILE THREADS BATCH EPOCHS open|keep FILE...\n", argv[0]);
    return 2;
  }
  Job job;
  job.sample_bytes = std::atoll(argv[1]);
  job.per_file = std::atoll(argv[2]);
  job.threads = std::atoi(argv[3]);
  job.batch = std::atoll(argv[4]);
  job.epochs = std::atoll(argv[5]);
  const std::string mode = argv[6];
  job.open_per_sample = mode == "open";
  job.direct = mode == "direct";
  if (mode.rfind("loop:", 0) == 0) job.prefetch = std::atoll(mode.c_str() + 5);
  if (job.sample_bytes <= 0 || job.per_file <= 0 || job.threads <= 0 || job.batch <= 0 || job.epochs <= 0 ||
      (mode != "open" && mode != "keep" && !job.direct && job.prefetch <= 0)) {
    std::fprintf(stderr, "%s: SAMPLE_BYTES, SAMPLES_PER_FILE, THREADS, BATCH and EPOCHS must be positive, "
                         "and the mode open, keep, direct or loop:PREFETCH (PREFETCH > 0)\n", argv[0]);
    return 2;
  }
  for (int i = 7; i < argc; ++i) job.files.emplace_back(argv[i]);
  if (!job.open_per_sample)
    for (const auto& f : job.files) {
      job.kept.push_back(::open(f.c_str(), O_RDONLY | O_CLOEXEC | (job.direct ? O_DIRECT : 0)));
      if (job.kept.back() < 0) {
        std::perror(f.c_str());
        return 1;
      }
    }
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  std::vector<char> ok(static_cast<std::size_t>(job.threads), 0);
  Loop loop;
  loop.done.assign(static_cast<std::size_t>(job.prefetch > 0 ? job.prefetch : 1), 0);
  for (int t = 0; t < job.threads; ++t) workers.emplace_back([&, t] { ok[static_cast<std::size_t>(t)] = work(job, t, loop); });
  const bool trained = job.prefetch <= 0 || train(job, loop);
  for (auto& w : workers) w.join();
  if (!trained) ok.assign(ok.size(), 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const char good : ok)
    if (!good) {
      std::fprintf(stderr, "%s: a read failed or came back short\n", argv[0]);
      return 1;
    }
  std::printf("%.6f\n", seconds);
  return 0;
}
