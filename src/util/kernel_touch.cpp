#include "util/kernel_touch.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trainio::util {

void zero_through_kernel(void* data, std::size_t size) {
  auto* at = static_cast<char*>(data);
  const int fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  std::size_t done = 0;
  if (fd >= 0) {
    while (done < size) {
      const ssize_t n = ::read(fd, at + done, size - done);
      if (n > 0) done += static_cast<std::size_t>(n);
      else if (n < 0 && errno == EINTR) continue;
      else break;
    }
    ::close(fd);
  }
  if (done < size) std::memset(at + done, 0, size - done);
}

void resize_touched(Bytes& buffer, std::size_t size) {
  buffer.resize(size);
  zero_through_kernel(buffer.data(), buffer.size());
}

}  // namespace trainio::util
