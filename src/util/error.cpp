#include "util/error.hpp"

#include <fmt/format.h>

#include <csignal>

#include "util/stop_request.hpp"

namespace trainio {

int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
    case ErrorKind::config:
      return 2;
    case ErrorKind::stopped:
      return util::stop_exit_code(util::stop_signal() != 0 ? util::stop_signal() : SIGINT);
    default:
      return 1;
  }
}

const char* kind_label(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage: return "usage error";
    case ErrorKind::config: return "config error";
    case ErrorKind::io: return "I/O error";
    case ErrorKind::data: return "dataset error";
    case ErrorKind::internal: return "internal error";
    case ErrorKind::peer: return "error";
    case ErrorKind::stopped: return "stopped";
  }
  return "error";
}

std::string format_error(const Error& e) {
  std::string out = fmt::format("trainio: {}", kind_label(e.kind()));
  // Usage and config errors are the same on every rank; for the rest the rank tells where to look.
  const bool everywhere = e.kind() == ErrorKind::usage || e.kind() == ErrorKind::config;
  if (e.rank() >= 0 && !everywhere) out += fmt::format(" (rank {})", e.rank());
  out += fmt::format(": {}", e.what());
  if (!e.hint().empty()) out += fmt::format("\n  fix: {}", e.hint());
  return out;
}

Error usage_error(std::string message, std::string hint) {
  return Error(ErrorKind::usage, std::move(message), std::move(hint));
}
Error config_error(std::string message, std::string hint) {
  return Error(ErrorKind::config, std::move(message), std::move(hint));
}
Error io_error(std::string message, std::string hint) {
  return Error(ErrorKind::io, std::move(message), std::move(hint));
}
Error data_error(std::string message, std::string hint) {
  return Error(ErrorKind::data, std::move(message), std::move(hint));
}
Error internal_error(std::string message) {
  return Error(ErrorKind::internal, std::move(message),
               "this is a bug in trainio; please report it with the command line and workload");
}

Error stopped_error(std::string message) { return Error(ErrorKind::stopped, std::move(message)); }

}  // namespace trainio
