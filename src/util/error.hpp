#pragma once
// The one error type of trainio. It carries what the user needs to act: what went wrong, the
// config key or file involved, the rank, and how to fix it. The kind decides the exit code.

#include <stdexcept>
#include <string>

namespace trainio {

enum class ErrorKind {
  usage,     // bad command line                       -> exit 2
  config,    // bad workload file or override           -> exit 2
  io,        // a storage call failed                   -> exit 1
  data,      // dataset missing, short or malformed     -> exit 1
  internal,  // a bug in trainio                        -> exit 1
  peer,      // another rank failed and reported it     -> exit 1, printed by that rank
  stopped,   // a signal asked the run to stop          -> exit 128 + the signal (130, 143)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, std::string hint = {})
      : std::runtime_error(message), kind_(kind), hint_(std::move(hint)) {}

  ErrorKind kind() const { return kind_; }
  const std::string& hint() const { return hint_; }
  int rank() const { return rank_; }

  // Context is added as the error travels up; the first value set wins.
  Error& with_rank(int rank) {
    if (rank_ < 0) rank_ = rank;
    return *this;
  }
  Error& with_hint(std::string hint) {
    if (hint_.empty()) hint_ = std::move(hint);
    return *this;
  }
  // A peer error carries the exit code of the rank that failed, so every rank of the job exits
  // with the same code.
  int peer_exit_code() const { return peer_exit_code_; }
  Error& with_peer_exit_code(int code) {
    peer_exit_code_ = code;
    return *this;
  }
  // Set once every rank knows of the failure (engine::together), so the job can end normally.
  bool settled() const { return settled_; }
  Error& mark_settled() {
    settled_ = true;
    return *this;
  }

 private:
  ErrorKind kind_;
  std::string hint_;
  int rank_ = -1;
  int peer_exit_code_ = 1;
  bool settled_ = false;
};

// Exit code for an error kind: 2 for usage/config errors, 1 for runtime failures.
int exit_code(ErrorKind kind);

// "error" or "config error" etc., for the message prefix.
const char* kind_label(ErrorKind kind);

// The whole user-facing message: "trainio: config error (rank 1): ...\n  fix: ...".
std::string format_error(const Error& e);

// Shorthand constructors keep call sites to one line.
Error usage_error(std::string message, std::string hint = {});
Error config_error(std::string message, std::string hint = {});
Error io_error(std::string message, std::string hint = {});
Error data_error(std::string message, std::string hint = {});
Error internal_error(std::string message);
// The run stops because a signal asked it to (util/stop_request.hpp), where it cannot keep a result.
Error stopped_error(std::string message);

}  // namespace trainio
