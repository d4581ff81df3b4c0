// The .pfw and Darshan DXT readers, and the recognition of trace files.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fstream>

#include "capture/darshan_reader.hpp"
#include "capture/pfw_reader.hpp"
#include "capture/trace_input.hpp"
#include "unit/temp_dir.hpp"
#include "util/error.hpp"

using namespace trainio;
using namespace trainio::capture;

namespace {
struct Seen {
  Call call;
  std::string path;
  std::uint64_t bytes, offset;
  std::int64_t start_ns, dur_ns;
};
}  // namespace

TEST_CASE("pfw: trainio's and dftracer's events, files by hash or by name", "[capture]") {
  std::vector<Seen> seen;
  std::int64_t end = 0;
  PfwReader r("t.pfw", [&](const Event& e) {
    if (e.call == Call::mark) return void(end = e.start_ns);
    seen.push_back(Seen{e.call, std::string(e.path), e.bytes, e.offset, e.start_ns, e.dur_ns});
  });
  for (const char* line : {
           "[",
           R"({"id":6,"name":"FH","cat":"trainio","ph":"M","pid":0,"tid":5,"args":{"name":"/d/a.npz","value":"f8"}})",
           R"({"id":7,"name":"open","cat":"POSIX","pid":0,"tid":5,"ts":10.5,"dur":2.0,"ph":"X","args":{"fhash":"f8","size":0}})",
           R"({"id":8,"name":"read","cat":"POSIX","pid":0,"tid":5,"ts":20,"dur":1,"ph":"X","args":{"fhash":"f8","size":4096,"offset":0}})",
           R"({"id":9,"name":"read","cat":"POSIX","pid":0,"tid":5,"ts":30,"dur":1,"ph":"X","args":{"fhash":"f8","size":100}})",
           R"({"id":10,"name":"step","cat":"train","pid":0,"tid":5,"ts":40,"dur":1,"ph":"X"})",
           R"({"name":"pread64","cat":"POSIX","pid":3,"tid":3,"ts":50,"dur":4,"ph":"X","args":{"fname":"/d/b.h5","size":65536,"ret":512,"offset":8}},)",
           R"({"name":"__xstat64","cat":"POSIX","pid":3,"tid":3,"ts":60,"dur":1,"ph":"X","args":{"fname":"/d/b.h5"}})",
           "]"})
    r.line(line);
  r.finish();
  REQUIRE(seen.size() == 5);
  CHECK(seen[0].call == Call::open);
  CHECK(seen[0].path == "/d/a.npz");
  CHECK(seen[0].start_ns == 10'500);
  CHECK(seen[0].dur_ns == 2'000);
  CHECK(seen[1].bytes == 4096);
  CHECK(seen[2].offset == 4096);  // no offset: where the thread's last read ended
  CHECK(seen[3].path == "/d/b.h5");
  CHECK(seen[3].bytes == 512);  // ret, not the size asked for
  CHECK(seen[3].offset == 8);
  CHECK(seen[4].call == Call::stat);
  CHECK(end == 61'000);  // the last event's end, whatever its kind
}

TEST_CASE("pfw: a file of other JSON or text is refused", "[capture]") {
  PfwReader r("x.pfw", [](const Event&) {});
  r.line("[");
  r.line("{not json");
  CHECK_THROWS_AS(r.finish(), Error);
}

TEST_CASE("darshan DXT text: segments in time order, MPI-IO left out", "[capture]") {
  std::vector<Seen> seen;
  DarshanReader r("d.txt", [&](const Event& e) {
    if (e.call == Call::mark) return;
    seen.push_back(Seen{e.call, std::string(e.path), e.bytes, e.offset, e.start_ns, e.dur_ns});
  });
  for (const char* line : {
           "# DXT_POSIX module data", "# DXT, file_id: 1, file_name: /lus/a.npz", "# DXT, rank: 0, hostname: n1",
           "# Module    Rank  Wt/Rd  Segment          Offset       Length    Start(s)      End(s)",
           " X_POSIX       0  read        0            4096       4096      0.2000      0.2010",
           " X_POSIX       0  read        1               0       4096      0.1000      0.1005",
           "# DXT, file_id: 2, file_name: /lus/ckpt.pt", " X_POSIX       1  write       0       0     1048576      0.3000      0.4000",
           "# DXT_MPIIO module data", "# DXT, file_id: 2, file_name: /lus/ckpt.pt",
           " X_MPIIO       1  write       0       0     1048576      0.3000      0.4000"})
    r.line(line);
  r.finish();
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].offset == 0);
  CHECK(seen[0].start_ns == 100'000'000);
  CHECK(seen[0].dur_ns == 500'000);
  CHECK(seen[1].offset == 4096);
  CHECK(seen[2].call == Call::write);
  CHECK(seen[2].path == "/lus/ckpt.pt");
  CHECK(seen[2].bytes == 1048576);
}

TEST_CASE("darshan DXT text: other text is refused naming it, and impossible times are not segments", "[capture]") {
  DarshanReader prose("notes.txt", [](const Event&) {});
  for (const char* line : {"# DXT, file_id: 1, file_name: /lus/a.npz", "shopping list", "eggs", "milk"}) prose.line(line);
  try {
    prose.finish();
    FAIL("other text was read as a trace");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("notes.txt") != std::string::npos);
  }
  // Times no clock gives (past the year 2100, negative, not numbers) are foreign lines, never converted.
  int sent = 0;
  DarshanReader odd("d.txt", [&](const Event& e) { sent += e.call != Call::mark; });
  odd.line("# DXT, file_id: 1, file_name: /lus/a.npz");
  for (int i = 0; i < 40; ++i) odd.line(" X_POSIX 0 read 0 0 4096 0.1000 0.1005");
  odd.line(" X_POSIX 0 read 1 0 4096 1e300 1e301");
  odd.line(" X_POSIX 0 read 2 0 4096 -5 0.1");
  odd.finish();
  CHECK(sent == 40);
}

TEST_CASE("trace input: kinds by content, -ff pids from names, folders, refusals", "[capture]") {
  test::TempDir dir("capture-input");
  {
    std::ofstream(dir / "job.4242") << "10:00:00.000001 openat(AT_FDCWD, \"/d/a\", O_RDONLY) = 3 <0.000001>\n"
                                        "10:00:00.000002 read(3, \"x\", 4096) = 4096 <0.000001>\n";
    std::ofstream(dir / "bin") << std::string("\x7f" "ELF\0\0\0", 7);
  }
  TraceInput in;
  const Profile p = read_traces({dir / "job.4242"}, &in);
  CHECK(p.tracer() == Tracer::strace);
  CHECK(p.first_pid() == 4242);
  REQUIRE(p.files().size() == 1);
  CHECK(p.files()[0].read_bytes == 4096);
  CHECK(in.bytes > 0);
  CHECK_THROWS_AS(read_traces({dir / "bin"}), Error);
  CHECK_THROWS_AS(read_traces({dir / "missing"}), Error);
}

TEST_CASE("pfw: events of the wrong types are counted as foreign, not thrown", "[capture]") {
  PfwReader r("t.pfw", [](const Event&) {});
  r.line("[");
  REQUIRE_NOTHROW(r.line(R"({"name":"read","cat":"POSIX","pid":"zero","tid":1,"ts":"late","ph":"X","args":{"fname":7}})"));
  REQUIRE_NOTHROW(r.line(R"({"name":"FH","ph":"M","args":{"name":3,"value":[1]}})"));
  for (int i = 0; i < 40; ++i)
    r.line(R"({"name":"read","cat":"POSIX","pid":0,"tid":1,"ts":1,"dur":1,"ph":"X","args":{"fname":"/d/a","size":1}})");
  REQUIRE_NOTHROW(r.finish());
}

TEST_CASE("pfw: numbers no tracer writes are foreign lines, never converted", "[capture]") {
  std::vector<Event> seen;
  PfwReader r("t.pfw", [&](const Event& e) {
    if (e.call != Call::mark) seen.push_back(e);
  });
  r.line("[");
  for (int i = 0; i < 100; ++i)
    r.line(R"({"name":"read","cat":"POSIX","pid":3,"tid":1,"ts":10,"dur":2,"ph":"X","args":{"fname":"/d/a","size":4096}})");
  for (const char* odd : {
           R"({"name":"read","cat":"POSIX","pid":3,"tid":1,"ts":1e300,"dur":2,"ph":"X","args":{"fname":"/d/a","size":1}})",
           R"({"name":"read","cat":"POSIX","pid":3,"tid":1,"ts":10,"dur":-1e300,"ph":"X","args":{"fname":"/d/a","size":1}})",
           R"({"name":"read","cat":"POSIX","pid":1e300,"tid":1,"ts":10,"ph":"X","args":{"fname":"/d/a","size":1}})",
           R"({"name":"read","cat":"POSIX","pid":3,"tid":1,"ts":10,"ph":"X","args":{"fname":"/d/a","size":1e300}})"})
    r.line(odd);
  r.finish();
  REQUIRE(seen.size() == 100);
  CHECK(seen.back().bytes == 4096);
  CHECK(seen.back().start_ns == 10'000);
}

TEST_CASE("pfw: dftracer's times, microseconds since 1970, are read", "[capture]") {
  // As DLIO's dftracer (1.0.8) writes a read: ts in microseconds of the Unix epoch (2026 here).
  std::vector<Event> seen;
  PfwReader r("t.pfw", [&](const Event& e) {
    if (e.call != Call::mark) seen.push_back(e);
  });
  r.line("[");
  r.line(R"({"id":11,"name":"FH","cat":"dftracer","pid":7,"tid":7,"ph":"M","args":{"name":"/d/a.npz","value":42}})");
  for (int i = 0; i < 3; ++i)
    r.line(R"({"id":12,"name":"read","cat":"POSIX","pid":7,"tid":8,"ts":1795844560525060,"dur":9,"ph":"X","args":{"fd":3,"count":4096,"ret":4096,"fhash":42}})");
  // A compute span without its time is no step (and no crash).
  r.line(R"({"id":13,"name":"TorchFramework.compute","cat":"ai_framework","pid":7,"tid":7,"dur":2000,"ph":"X","args":{}})");
  r.line("]");
  r.finish();
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].start_ns == 1795844560525060LL * 1000);
  CHECK(seen[0].bytes == 4096);
}

TEST_CASE("pfw: a read without an offset starts where dftracer's lseek64 went", "[capture]") {
  std::vector<std::uint64_t> offsets;
  PfwReader r("t.pfw", [&](const Event& e) {
    if (e.call == Call::read) offsets.push_back(e.offset);
  });
  r.line("[");
  r.line(R"({"name":"FH","cat":"dftracer","pid":7,"tid":7,"ph":"M","args":{"name":"/d/a.npz","value":42}})");
  auto call = [&](const char* name, const char* args) {
    r.line(fmt::format(R"({{"name":"{}","cat":"POSIX","pid":7,"tid":8,"ts":10,"dur":1,"ph":"X","args":{{"fhash":42,{}}}}})", name, args));
  };
  call("open64", R"("flags":0,"ret":3)");
  call("read", R"("fd":3,"count":4096,"ret":4096)");           // at 0
  call("lseek64", R"("fd":3,"offset":-22,"whence":2,"ret":66012)");  // 22 bytes before the end
  call("read", R"("fd":3,"count":22,"ret":22)");               // at 66012
  call("lseek64", R"("fd":3,"offset":100,"whence":0,"ret":100)");
  call("read", R"("fd":3,"count":10,"ret":10)");               // at 100
  r.line("]");
  r.finish();
  CHECK(offsets == std::vector<std::uint64_t>{0, 66012, 100});
}
