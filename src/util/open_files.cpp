#include "util/open_files.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <cerrno>

#include "util/error.hpp"

namespace trainio::util {

void ensure_open_files(std::uint64_t needed, std::string_view what) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed) return;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
    throw io_error(fmt::format("{} needs {} open files, and this process's limit is {}", what, needed, limit.rlim_max),
                   fmt::format("raise the open-files limit (ulimit -n {}, or LimitNOFILE/nofile in the system's limits)",
                               needed));
  limit.rlim_cur = needed;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
    throw io_error(fmt::format("{} needs {} open files, and raising this process's limit to that failed", what, needed),
                   fmt::format("raise the open-files limit (ulimit -n {})", needed));
}

bool absent(int error_number) { return error_number == ENOENT || error_number == ENOTDIR; }

}  // namespace trainio::util
