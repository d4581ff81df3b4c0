// The plain writer generation is held against (issue 14): creates `files` new files in `folder`,
// writes `bytes` to each in pieces of `piece` bytes from one buffer filled before the clock
// starts, and closes them; prints the wall-clock seconds. No content generation, no format, no
// instrumentation: the least a client can do to put those bytes in those files. With `rename`,
// each file is written under a temporary name and renamed into place, as trainio commits every
// data file (so that a half-written file never passes for a whole one): the protocol's own cost.
//
// Usage: trainio_plain_writer FOLDER FILES BYTES [PIECE] [rename]

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FOLDER FILES BYTES [PIECE] [rename]\n", argv[0]);
    return 2;
  }
  const std::string folder = argv[1];
  const long files = std::atol(argv[2]);
  const long long bytes = std::atoll(argv[3]);
  const long long piece = argc > 4 ? std::atoll(argv[4]) : 1 << 20;
  const bool rename_into_place = argc > 5 && std::string(argv[5]) == "rename";
  void* memory = nullptr;
  if (posix_memalign(&memory, 4096, static_cast<std::size_t>(piece)) != 0) return 1;
  auto* buffer = static_cast<unsigned char*>(memory);
  for (long long i = 0; i < piece; ++i) buffer[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
  const auto start = std::chrono::steady_clock::now();
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
    if (::close(fd) != 0) {
      std::perror("close");
      return 1;
    }
    if (rename_into_place && ::rename(writing.c_str(), path.c_str()) != 0) {
      std::perror("rename");
      return 1;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.6f\n", seconds);
  std::free(memory);
  return 0;
}
