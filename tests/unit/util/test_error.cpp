// trainio's one error type (util/error.hpp): exit codes by kind, the message a user reads, and
// context that keeps the first value set as the error travels up.
#include <catch2/catch.hpp>

#include <string>

#include "util/error.hpp"

using namespace trainio;

TEST_CASE("usage and config errors exit 2, runtime failures 1, a stop 128 + the signal") {
  CHECK(exit_code(ErrorKind::usage) == 2);
  CHECK(exit_code(ErrorKind::config) == 2);
  CHECK(exit_code(ErrorKind::io) == 1);
  CHECK(exit_code(ErrorKind::data) == 1);
  CHECK(exit_code(ErrorKind::internal) == 1);
  CHECK(exit_code(ErrorKind::peer) == 1);
  CHECK(exit_code(ErrorKind::stopped) == 130);  // no signal recorded: as an interrupt (SIGINT)
}

TEST_CASE("the message names the kind, the rank where it matters, and the fix") {
  CHECK(format_error(io_error("pread of 'a.npz' failed", "check the disk")) ==
        "trainio: I/O error: pread of 'a.npz' failed\n  fix: check the disk");
  Error e = data_error("file 'x' is short");
  e.with_rank(3);
  CHECK(format_error(e) == "trainio: dataset error (rank 3): file 'x' is short");
  // A config error is the same on every rank: no rank in its message.
  Error c = config_error("unknown key 'reader.bach_size'", "did you mean 'reader.batch_size'?");
  c.with_rank(2);
  CHECK(format_error(c) == "trainio: config error: unknown key 'reader.bach_size'\n  fix: did you mean 'reader.batch_size'?");
  CHECK(format_error(usage_error("no workload")) == "trainio: usage error: no workload");
  CHECK(format_error(stopped_error("SIGTERM")) == "trainio: stopped: SIGTERM");
  // An internal error always says it is a bug and how to report it.
  CHECK(internal_error("x").hint().find("bug in trainio") != std::string::npos);
  CHECK(std::string(kind_label(ErrorKind::peer)) == "error");
}

TEST_CASE("context set as the error travels up: the first value wins") {
  Error e = io_error("write failed");
  CHECK(e.rank() == -1);
  e.with_rank(4).with_rank(0);
  CHECK(e.rank() == 4);
  e.with_hint("free space").with_hint("other");
  CHECK(e.hint() == "free space");
  Error h = io_error("write failed", "given");
  h.with_hint("later");
  CHECK(h.hint() == "given");
  CHECK(e.peer_exit_code() == 1);
  CHECK(e.with_peer_exit_code(2).peer_exit_code() == 2);
  CHECK_FALSE(e.settled());
  CHECK(e.mark_settled().settled());
  CHECK(e.kind() == ErrorKind::io);
}
