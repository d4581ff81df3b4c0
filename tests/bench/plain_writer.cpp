// The plain writer generation is held against (issue 14): creates `files` new files in `folder`,
// writes `bytes` to each in pieces of `piece` bytes from one buffer filled before the clock
// starts, and closes them; prints the wall-clock seconds. No content generation, no format, no
// instrumentation: the least a client can do to put those bytes in those files. With `rename`,
// each file is written under a temporary name and renamed into place, as trainio commits every
// data file (so that a half-written file never passes for a whole one): the protocol's own cost.
// With `sync`, each file is made durable as trainio's generation makes it: fdatasync'ed by one of
// 16 threads as soon as it is written (concurrent syncs share the file system's journal commits),
// closed and renamed after its sync, and the folder fsynced once at the end; the time printed is
// then until the last file is durable.
//
// Usage: trainio_plain_writer FOLDER FILES BYTES [PIECE] [rename|place] [sync]

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// Files written and open, synced, closed and renamed by up to `threads` threads, each started
// when more files wait than threads run (as trainio's storage::SyncQueue starts them).
class Syncer {
 public:
  explicit Syncer(unsigned threads) : most_(threads) {}
  void hand_over(int fd, std::string writing, std::string path) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return pending_ < 2 * most_; });
    jobs_.push_back({fd, std::move(writing), std::move(path)});
    ++pending_;
    if (threads_.size() < most_ && threads_.size() < pending_) threads_.emplace_back([this] { work(); });
    ready_.notify_one();
  }
  bool finish() {
    {
      const std::lock_guard lock(mutex_);
      done_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
    return ok_;
  }

 private:
  struct Job {
    int fd;
    std::string writing, path;
  };
  void work() {
    std::unique_lock lock(mutex_);
    while (true) {
      ready_.wait(lock, [&] { return done_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      Job job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      bool ok = ::fdatasync(job.fd) == 0 && ::close(job.fd) == 0;
      if (ok && job.writing != job.path) ok = ::rename(job.writing.c_str(), job.path.c_str()) == 0;
      if (!ok) std::perror(job.path.c_str());
      lock.lock();
      ok_ = ok_ && ok;
      --pending_;
      room_.notify_one();
    }
  }
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<Job> jobs_;
  std::size_t most_, pending_ = 0;  // pending: waiting or being synced
  bool done_ = false, ok_ = true;
  std::vector<std::thread> threads_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FOLDER FILES BYTES [PIECE] [rename|place] [sync]\n", argv[0]);
    return 2;
  }
  const std::string folder = argv[1];
  const long files = std::atol(argv[2]);
  const long long bytes = std::atoll(argv[3]);
  const long long piece = argc > 4 ? std::atoll(argv[4]) : 1 << 20;
  const bool rename_into_place = argc > 5 && std::string(argv[5]) == "rename";
  const bool sync = argc > 6 && std::string(argv[6]) == "sync";
  void* memory = nullptr;
  if (posix_memalign(&memory, 4096, static_cast<std::size_t>(piece)) != 0) return 1;
  auto* buffer = static_cast<unsigned char*>(memory);
  // Touched by the kernel too before the clock, as trainio touches its write buffer
  // (util/kernel_touch.hpp): the first write() from a page costs ~7 us on shadow-paged VMs.
  const int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  if (zero < 0 || ::read(zero, buffer, static_cast<std::size_t>(piece)) != piece) return 1;
  ::close(zero);
  for (long long i = 0; i < piece; ++i) buffer[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
  const auto start = std::chrono::steady_clock::now();
  Syncer* syncer = sync ? new Syncer(16) : nullptr;
  for (long f = 0; f < files; ++f) {
    const std::string path = folder + "/plain_" + std::to_string(f);
    const std::string writing = rename_into_place ? folder + "/.plain_" + std::to_string(f) + ".tmp" : path;
    const int fd = ::open(writing.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      std::perror(writing.c_str());
      return 1;
    }
    for (long long done = 0; done < bytes;) {
      const long long n = bytes - done < piece ? bytes - done : piece;
      const ssize_t w = ::write(fd, buffer, static_cast<std::size_t>(n));
      if (w <= 0) {
        std::perror("write");
        return 1;
      }
      done += w;
    }
    if (syncer) {
      syncer->hand_over(fd, writing, path);
      continue;
    }
    if (::close(fd) != 0) {
      std::perror("close");
      return 1;
    }
    if (rename_into_place && ::rename(writing.c_str(), path.c_str()) != 0) {
      std::perror("rename");
      return 1;
    }
  }
  if (sync) {
    const bool ok = syncer->finish();
    delete syncer;
    const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!ok || dir < 0 || ::fsync(dir) != 0 || ::close(dir) != 0) {
      std::perror(folder.c_str());
      return 1;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.6f\n", seconds);
  std::free(memory);
  return 0;
}
