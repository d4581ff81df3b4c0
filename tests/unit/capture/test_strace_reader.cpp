// The strace reader: line forms, descriptor tracking, refusal of foreign text.
#include <catch2/catch.hpp>

#include <sstream>

#include "capture/strace_reader.hpp"
#include "util/error.hpp"

using namespace trainio;
using namespace trainio::capture;

namespace {

struct Parsed {
  Call call;
  long pid;
  std::string path;
  std::uint64_t bytes, offset;
  std::int64_t start_ns, dur_ns;
  bool failed, for_write;
  std::uint64_t file_size;
};

std::vector<Parsed> parse(const std::string& text, long default_pid = 0) {
  std::vector<Parsed> out;
  std::istringstream in(text);
  read_strace(in, "test.strace",
              [&](const Event& e) {
                if (e.call == Call::mark) return;  // the trace's end: tested on its own
                out.push_back(Parsed{e.call, e.pid, std::string(e.path), e.bytes, e.offset, e.start_ns, e.dur_ns,
                                     e.failed, e.for_write, e.file_size});
              },
              default_pid);
  return out;
}

}  // namespace

TEST_CASE("strace: open, reads with positions, pread64, lseek, close", "[capture]") {
  const auto ev = parse(
      "100  10:00:00.000001 openat(AT_FDCWD, \"/data/a.npz\", O_RDONLY|O_CLOEXEC) = 3 <0.000010>\n"
      "100  10:00:00.000100 newfstatat(3, \"\", {st_mode=S_IFREG|0644, st_size=66027, ...}, AT_EMPTY_PATH) = 0 <0.000005>\n"
      "100  10:00:00.000200 read(3, \"PK\\3\\4\"..., 4096) = 4096 <0.000020>\n"
      "100  10:00:00.000300 lseek(3, -22, SEEK_END) = 66005 <0.000002>\n"
      "100  10:00:00.000400 read(3, \"PK\\5\\6\", 23) = 22 <0.000003>\n"
      "100  10:00:00.000500 pread64(3, \"\"..., 1000, 5000) = 1000 <0.000004>\n"
      "100  10:00:00.000600 close(3) = 0 <0.000001>\n");
  REQUIRE(ev.size() == 7);
  CHECK(ev[0].call == Call::open);
  CHECK(ev[0].path == "/data/a.npz");
  CHECK(ev[0].pid == 100);
  CHECK(ev[0].start_ns == 36'000'000'001'000LL);
  CHECK(ev[0].dur_ns == 10'000);
  CHECK_FALSE(ev[0].for_write);
  CHECK(ev[1].call == Call::stat);
  CHECK(ev[1].path == "/data/a.npz");
  CHECK(ev[1].file_size == 66027);
  CHECK(ev[2].bytes == 4096);
  CHECK(ev[2].offset == 0);
  CHECK(ev[3].call == Call::seek);
  CHECK(ev[4].offset == 66005);
  CHECK(ev[4].bytes == 22);
  CHECK(ev[5].offset == 5000);
  CHECK(ev[5].bytes == 1000);
  CHECK(ev[6].call == Call::close);
  CHECK(ev[6].path == "/data/a.npz");
}

TEST_CASE("strace: unfinished and resumed calls of two processes join", "[capture]") {
  const auto ev = parse(
      "7  10:00:00.000001 openat(AT_FDCWD, \"/d/x\", O_RDONLY <unfinished ...>\n"
      "8  10:00:00.000002 openat(AT_FDCWD, \"/d/y\", O_RDONLY) = 3 <0.000001>\n"
      "7  10:00:00.000050 <... openat resumed>) = 4 <0.000049>\n"
      "7  10:00:00.000060 read(4,  <unfinished ...>\n"
      "8  10:00:00.000061 read(3, \"\", 10) = 0 <0.000001>\n"
      "7  10:00:00.000090 <... read resumed>\"abc\", 100) = 3 <0.000030>\n");
  REQUIRE(ev.size() == 4);
  CHECK(ev[0].path == "/d/y");
  CHECK(ev[1].path == "/d/x");
  CHECK(ev[1].pid == 7);
  CHECK(ev[1].start_ns == 36'000'000'001'000LL);  // the unfinished line's time
  CHECK(ev[1].dur_ns == 49'000);
  CHECK(ev[3].path == "/d/x");
  CHECK(ev[3].bytes == 3);
  CHECK(ev[3].dur_ns == 30'000);
}

TEST_CASE("strace: errors, quoted paths with escapes, writes, mmap, statx", "[capture]") {
  const auto ev = parse(
      "1 10:00:00.1 openat(AT_FDCWD, \"/d/missing\", O_RDONLY) = -1 ENOENT (No such file or directory) <0.000004>\n"
      "1 10:00:00.2 openat(AT_FDCWD, \"/d/a \\\"b\\\"\\303\\251\\x41.pt\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 5 <0.000004>\n"
      "1 10:00:00.3 write(5, \"PK\\3\\4\"..., 65536) = 65536 <0.000100>\n"
      "1 10:00:00.4 pwrite64(5, \"x\", 1, 100000) = 1 <0.000001>\n"
      "1 10:00:00.5 mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, 5, 0) = 0x7f0000000000 <0.000002>\n"
      "1 10:00:00.6 statx(AT_FDCWD, \"/d/z\", AT_STATX_SYNC_AS_STAT, STATX_ALL, {stx_mask=STATX_BASIC_STATS, stx_size=1234, ...}) = 0 <0.000002>\n"
      "1 10:00:00.7 fsync(5) = 0 <0.001000>\n");
  REQUIRE(ev.size() == 7);
  CHECK(ev[0].failed);
  CHECK(ev[0].path == "/d/missing");
  CHECK(ev[1].path == "/d/a \"b\"\xc3\xa9" "A.pt");
  CHECK(ev[1].for_write);
  CHECK(ev[2].call == Call::write);
  CHECK(ev[2].path == ev[1].path);
  CHECK(ev[2].bytes == 65536);
  CHECK(ev[3].offset == 100000);
  CHECK(ev[4].call == Call::mmap);
  CHECK(ev[4].bytes == 8192);
  CHECK(ev[5].file_size == 1234);
  CHECK(ev[5].path == "/d/z");
  CHECK(ev[6].call == Call::fsync);
}

TEST_CASE("strace: threads share descriptors, forked children copy them", "[capture]") {
  const auto ev = parse(
      "1 10:00:00.1 openat(AT_FDCWD, \"/d/a\", O_RDONLY) = 3 <0.000001>\n"
      "1 10:00:00.2 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD, child_tid=0x1}, 88) = 2 <0.000010>\n"
      "1 10:00:00.3 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 9 <0.000010>\n"
      "2 10:00:00.4 openat(AT_FDCWD, \"/d/b\", O_RDONLY) = 4 <0.000001>\n"
      "1 10:00:00.5 read(4, \"x\", 1) = 1 <0.000001>\n"
      "9 10:00:00.6 read(3, \"x\", 1) = 1 <0.000001>\n"
      "9 10:00:00.7 read(4, \"x\", 1) = 1 <0.000001>\n");
  std::vector<std::string> reads;
  for (const auto& e : ev)
    if (e.call == Call::read) reads.push_back(std::to_string(e.pid) + ":" + e.path);
  // The thread's fd 4 is the main thread's; the forked child has fd 3 (copied) but not the later fd 4.
  CHECK(reads == std::vector<std::string>{"1:/d/b", "9:/d/a"});
}

TEST_CASE("strace: -ff files take their pid from the name, [pid N] prefixes and -ttt times", "[capture]") {
  auto ev = parse("10:00:00.000001 openat(AT_FDCWD, \"/d/a\", O_RDONLY) = 3 <0.000001>\n", 4242);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].pid == 4242);
  ev = parse("[pid  77] 1700000000.500000 openat(AT_FDCWD, \"/d/a\", O_RDONLY) = 3 <0.000001>\n"
             "+++ exited with 0 +++\n--- SIGCHLD {si_signo=SIGCHLD} ---\n");
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].pid == 77);
  CHECK(ev[0].start_ns == 1'700'000'000'500'000'000LL);
}

TEST_CASE("strace: relative paths resolve against an openat directory descriptor", "[capture]") {
  // The directory's own open is no file's: only the file inside it is an event.
  const auto ev = parse("1 10:00:00.1 openat(AT_FDCWD, \"/data\", O_RDONLY|O_DIRECTORY) = 3 <0.000001>\n"
                        "1 10:00:00.2 openat(3, \"sub/x.npz\", O_RDONLY) = 4 <0.000001>\n");
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].path == "/data/sub/x.npz");
}

TEST_CASE("strace: foreign text is refused with the file and line named", "[capture]") {
  try {
    parse("hello world\nthis is not strace\nnor is this\n");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()).find("test.strace is not strace output: line 1") != std::string::npos);
  }
}

TEST_CASE("strace syntax pieces", "[capture]") {
  std::string_view a[8];
  REQUIRE(strace_syntax::split_args("3, \"a,b\", {x=1, y=[2, 3]}, 4", a, 8) == 4);
  CHECK(a[1] == "\"a,b\"");
  CHECK(a[2] == "{x=1, y=[2, 3]}");
  CHECK(strace_syntax::unquote("\"\\x41\\102\\n\\\\\"...") == "AB\n\\");
  CHECK(strace_syntax::number("0x10") == 16);
  CHECK(strace_syntax::number("-22") == -22);
}

TEST_CASE("strace: hostile lines are counted, never a crash", "[capture]") {
  // A result cut off after '=', a number beyond 64 bits, a call cut before its ')'.
  std::string text = "1 10:00:00.1 openat(AT_FDCWD, \"/d/a\", O_RDONLY) = 3 <0.000001>\n"
                     "1 10:00:00.2 read(3, \"x\", 1) =\n"
                     "1 10:00:00.3 read(3, \"x\", 1) = 99999999999999999999999999 <0.1>\n"
                     "1 10:00:00.4 pread64(3, \"x\", 1, 99999999999999999999999999999) = 1 <0.1>\n"
                     "1 10:00:00.5 read(3, \"x\n";
  for (int i = 0; i < 40; ++i) text += "1 10:00:00.6 close(9) = 0 <0.000001>\n";
  std::vector<Parsed> ev;
  REQUIRE_NOTHROW(ev = parse(text));
  CHECK(ev.size() >= 1);
}

TEST_CASE("strace: times and durations no clock gives are not converted", "[capture]") {
  // A -ttt time past 2096, a clock field of 9 digits, a duration of 10^25 s: none fits
  // nanoseconds in 64 bits. The lines are foreign (the times) or keep no duration.
  std::string text = "1 10:00:00.1 openat(AT_FDCWD, \"/d/a\", O_RDONLY) = 3 <0.000001>\n"
                     "1 99999999999999999.5 read(3, \"x\", 1) = 1 <0.1>\n"
                     "1 10:00:999999999.5 read(3, \"x\", 1) = 1 <0.1>\n"
                     "1 10:00:00.7 read(3, \"x\", 1) = 1 <10000000000000000000000000.5>\n";
  for (int i = 0; i < 40; ++i) text += "1 10:00:00.8 read(3, \"x\", 1) = 1 <0.000001>\n";
  const auto ev = parse(text);
  REQUIRE(ev.size() == 42);  // the open, the read of no duration, the 40 reads
  CHECK(ev[1].start_ns == 36'000'700'000'000LL);
  CHECK(ev[1].dur_ns == -1);
  CHECK(ev[2].dur_ns == 1'000);
  // A clock that goes round midnight every other line for years is not a trace.
  std::string spin;
  for (int i = 0; i < 8000; ++i) spin += i % 2 ? "1 23:00:00.0 close(9) = 0 <0.000001>\n" : "1 00:00:00.0 close(9) = 0 <0.000001>\n";
  CHECK_THROWS_AS(parse(spin), Error);
}

TEST_CASE("strace: the trace's end is marked with its last time", "[capture]") {
  std::int64_t end = 0;
  std::istringstream in("1 10:00:00.1 openat(AT_FDCWD, \"/d/a\", O_RDONLY) = 3 <0.000001>\n"
                        "1 10:00:02.5 futex(0x1, FUTEX_WAKE, 1) = 0 <0.000001>\n");
  read_strace(in, "t", [&](const Event& e) {
    if (e.call == Call::mark) end = e.start_ns;
  });
  CHECK(end == 36'002'500'000'000LL);
}
