#include "capture/trace_input.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>

#include "capture/darshan_reader.hpp"
#include "capture/pfw_reader.hpp"
#include "capture/strace_reader.hpp"
#include "util/error.hpp"

namespace trainio::capture {

namespace {

namespace fs = std::filesystem;

const char* const kFix = "give strace's output (strace -f -tt -T -o FILE, or -ff files), .pfw traces (a results "
                         "folder of a run with --trace) or darshan-dxt-parser text, gzip-compressed or not";

// Lines of a file, gzip or plain (zlib reads plain files as they are).
class LineFile {
 public:
  explicit LineFile(const std::string& path) : file_(gzopen(path.c_str(), "rb")) {
    if (!file_) throw usage_error(fmt::format("cannot open trace {}: {}", path, std::strerror(errno)), kFix);
    gzbuffer(file_, 1 << 20);
  }
  ~LineFile() { gzclose(file_); }
  LineFile(const LineFile&) = delete;
  LineFile& operator=(const LineFile&) = delete;
  bool next(std::string& line) {
    line.clear();
    char buf[65536];
    while (gzgets(file_, buf, sizeof buf)) {
      const std::size_t n = std::strlen(buf);
      bytes_ += n;
      line.append(buf, n);
      if (n > 0 && buf[n - 1] == '\n') {
        line.pop_back();
        return true;
      }
    }
    int err = 0;
    const char* msg = gzerror(file_, &err);
    if (err != Z_OK && err != Z_STREAM_END) throw usage_error(fmt::format("cannot read trace: {}", msg), kFix);
    return !line.empty();
  }
  std::uint64_t bytes() const { return bytes_; }

 private:
  gzFile file_;
  std::uint64_t bytes_ = 0;
};

enum class Kind { strace, pfw, darshan };

Kind kind_of(const std::string& first, const std::string& path) {
  if (first.find('\0') != std::string::npos)
    throw usage_error(fmt::format("{} is a binary file, not a trace (a Darshan log needs darshan-dxt-parser first)", path),
                      kFix);
  if (first.starts_with("[") || first.starts_with("{")) return Kind::pfw;
  if (first.starts_with("#") && (first.find("darshan") != std::string::npos || first.find("DXT") != std::string::npos ||
                                 first.find("****") != std::string::npos))
    return Kind::darshan;
  return Kind::strace;
}

// The pid of a `strace -ff -o NAME` file: NAME.<pid>.
long ff_pid(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  const std::size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 == name.size()) return 0;
  if (name.size() - dot - 1 > 9) return 0;  // no pid
  for (std::size_t i = dot + 1; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return 0;
  return std::stol(name.substr(dot + 1));
}

void read_one(const std::string& path, Profile& profile, bool first, TraceInput& input) {
  LineFile in(path);
  std::string line;
  bool any = false;
  while (in.next(line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      any = true;
      break;
    }
  if (!any) throw usage_error(fmt::format("trace {} is empty", path), kFix);
  const Kind kind = kind_of(line, path);
  const Tracer tracer = kind == Kind::strace ? Tracer::strace : kind == Kind::pfw ? Tracer::pfw : Tracer::darshan;
  if (first) profile.set_tracer(tracer);
  else if (profile.tracer() != tracer)
    throw usage_error(fmt::format("trace {} is {} output, the traces before it {}: one job's traces are of one kind", path,
                                  tracer_name(tracer), tracer_name(profile.tracer())),
                      kFix);
  const EventSink sink = [&profile](const Event& e) { profile.add(e); };
  auto drive = [&](auto& reader) {
    do reader.line(line);
    while (in.next(line));
    reader.finish();
  };
  if (kind == Kind::strace) {
    StraceReader r(path, sink, ff_pid(path));
    drive(r);
  } else if (kind == Kind::pfw) {
    PfwReader r(path, sink);
    drive(r);
    if (r.stats_unrecorded()) profile.set_unrecorded(Call::stat);
  } else {
    DarshanReader r(path, sink);
    drive(r);
    // DXT keeps read and write segments only, their times printed to 0.1 ms.
    for (Call c : {Call::open, Call::close, Call::stat, Call::seek, Call::mmap, Call::fsync}) profile.set_unrecorded(c);
    profile.set_time_step_ns(100'000);
  }
  input.bytes += in.bytes();
}

}  // namespace

Profile read_traces(const std::vector<std::string>& paths, TraceInput* input) {
  TraceInput local;
  TraceInput& in = input ? *input : local;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> pfw, all;
      for (const auto& entry : fs::directory_iterator(p)) {
        if (!entry.is_regular_file()) continue;
        const std::string name = entry.path().filename().string();
        (name.ends_with(".pfw") || name.ends_with(".pfw.gz") ? pfw : all).push_back(entry.path().string());
      }
      auto& chosen = pfw.empty() ? all : pfw;
      std::sort(chosen.begin(), chosen.end());
      if (chosen.empty()) throw usage_error(fmt::format("folder {} holds no trace files", p), kFix);
      in.files.insert(in.files.end(), chosen.begin(), chosen.end());
    } else if (fs::is_regular_file(p, ec)) {
      in.files.push_back(p);
    } else {
      throw usage_error(fmt::format("trace {} does not exist", p), kFix);
    }
  }
  Profile profile;
  for (std::size_t i = 0; i < in.files.size(); ++i) read_one(in.files[i], profile, i == 0, in);
  in.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return profile;
}

}  // namespace trainio::capture
