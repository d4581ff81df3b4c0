// A plain replay of a list of reads, for formats whose reads are not one per sample (Parquet's
// row groups and footers): the least a client can do to make the same calls. The list is what
// bench.py takes from strace of a trainio run, one call per line:
//   open PATH
//   read OFFSET LENGTH     (a pread on the file opened last)
//   close
// Each read lands in one page-aligned buffer of the longest read's size, allocated and touched
// before the clock starts. No plan, no samples, no records. Prints each epoch's wall-clock
// seconds, one per line.
//
// Usage: trainio_plain_ranges LIST EPOCHS

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Call {
  enum Kind { open, read, close } kind;
  std::string path;
  long long offset = 0, length = 0;
};

std::vector<Call> load(const char* list) {
  std::ifstream in(list);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", list);
    std::exit(2);
  }
  std::vector<Call> calls;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    Call c{Call::close, {}, 0, 0};
    if (kind == "open") {
      c.kind = Call::open;
      words >> std::ws;
      std::getline(words, c.path);
    } else if (kind == "read") {
      c.kind = Call::read;
      words >> c.offset >> c.length;
    } else if (kind != "close") {
      std::fprintf(stderr, "%s: not a call: %s\n", list, line.c_str());
      std::exit(2);
    }
    calls.push_back(c);
  }
  return calls;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s LIST EPOCHS\n", argv[0]);
    return 2;
  }
  const std::vector<Call> calls = load(argv[1]);
  const int epochs = std::atoi(argv[2]);
  long long longest = 4096;
  for (const Call& c : calls) longest = c.length > longest ? c.length : longest;
  void* mem = mmap(nullptr, static_cast<size_t>(longest), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 1;
  std::memset(mem, 1, static_cast<size_t>(longest));
  char* buffer = static_cast<char*>(mem);
  for (int e = 0; e < epochs; ++e) {
    const auto start = std::chrono::steady_clock::now();
    int fd = -1;
    for (const Call& c : calls) {
      if (c.kind == Call::open) {
        fd = ::open(c.path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
          std::perror(c.path.c_str());
          return 1;
        }
      } else if (c.kind == Call::read) {
        if (pread(fd, buffer, static_cast<size_t>(c.length), c.offset) != c.length) {
          std::perror("pread");
          return 1;
        }
      } else {
        ::close(fd);
        fd = -1;
      }
    }
    std::printf("%.6f\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return 0;
}
