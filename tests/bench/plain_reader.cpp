// The plain reader hot reads are held against where fio cannot do the same work (issue 14): a
// DataLoader's workers reading samples of fixed size, in file order, batch by batch. Worker
// thread t reads batches t, t + THREADS, ... of each epoch into its own batch buffer (BATCH
// samples side by side, as a collated batch holds them). With `open`, each sample is read as
// DLIO's on_demand readers read it: open the file, one pread, close; with `keep`, every file is
// opened once before the clock starts and each sample is one pread. No plan, no timing per
// sample, no records: the least a client can do to make those calls. Prints the wall-clock
// seconds of all epochs.
//
// Usage: trainio_plain_reader SAMPLE_BYTES SAMPLES_PER_FILE THREADS BATCH EPOCHS open|keep FILE...

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
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

// Worker `t`: batches t, t + threads, ... of every epoch.
bool work(const Job& job, int t) {
  void* memory = nullptr;
  if (posix_memalign(&memory, 4096, static_cast<std::size_t>(job.batch * job.sample_bytes)) != 0) return false;
  auto* buffer = static_cast<char*>(memory);
  const long long samples = static_cast<long long>(job.files.size()) * job.per_file;
  const long long batches = samples / job.batch;  // the last partial batch is dropped, as trainio does
  bool ok = true;
  for (long long e = 0; e < job.epochs && ok; ++e)
    for (long long b = t; b < batches && ok; b += job.threads)
      for (long long i = 0; i < job.batch && ok; ++i) ok = read_sample(job, b * job.batch + i, buffer + i * job.sample_bytes);
  std::free(memory);
  return ok;
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
  job.open_per_sample = std::string(argv[6]) == "open";
  if (job.sample_bytes <= 0 || job.per_file <= 0 || job.threads <= 0 || job.batch <= 0 || job.epochs <= 0 ||
      (!job.open_per_sample && std::string(argv[6]) != "keep")) {
    std::fprintf(stderr, "%s: SAMPLE_BYTES, SAMPLES_PER_FILE, THREADS, BATCH and EPOCHS must be positive, "
                         "and the mode open or keep\n", argv[0]);
    return 2;
  }
  for (int i = 7; i < argc; ++i) job.files.emplace_back(argv[i]);
  if (!job.open_per_sample)
    for (const auto& f : job.files) {
      job.kept.push_back(::open(f.c_str(), O_RDONLY | O_CLOEXEC));
      if (job.kept.back() < 0) {
        std::perror(f.c_str());
        return 1;
      }
    }
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  std::vector<char> ok(static_cast<std::size_t>(job.threads), 0);
  for (int t = 0; t < job.threads; ++t) workers.emplace_back([&, t] { ok[static_cast<std::size_t>(t)] = work(job, t); });
  for (auto& w : workers) w.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const char good : ok)
    if (!good) {
      std::fprintf(stderr, "%s: a read failed or came back short\n", argv[0]);
      return 1;
    }
  std::printf("%.6f\n", seconds);
  return 0;
}
