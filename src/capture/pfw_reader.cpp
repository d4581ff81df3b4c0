#include "capture/pfw_reader.hpp"

#include <cstdio>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "util/error.hpp"

namespace trainio::capture {

bool pfw_call(std::string_view n, Call* call) {
  if (n.starts_with("__")) n.remove_prefix(2);  // __xstat64, __fxstat64
  auto is = [&](std::initializer_list<std::string_view> names) {
    for (auto x : names)
      if (n == x) return true;
    return false;
  };
  if (is({"open", "open64", "openat", "openat64", "creat", "creat64", "fopen", "fopen64"})) *call = Call::open;
  else if (is({"close", "fclose"})) *call = Call::close;
  else if (is({"read", "pread", "pread64", "readv", "preadv", "preadv2", "fread", "touch"})) *call = Call::read;
  else if (is({"write", "pwrite", "pwrite64", "writev", "pwritev", "pwritev2", "fwrite"})) *call = Call::write;
  else if (is({"lseek", "lseek64", "fseek", "fseeko", "seek"})) *call = Call::seek;
  else if (is({"stat", "stat64", "lstat", "lstat64", "fstat", "fstat64", "xstat", "xstat64", "lxstat", "lxstat64",
               "fxstat", "fxstat64", "fstatat", "fstatat64", "newfstatat", "statx", "access", "faccessat"}))
    *call = Call::stat;
  else if (is({"mmap", "mmap64"})) *call = Call::mmap;
  else if (is({"fsync", "fdatasync"})) *call = Call::fsync;
  else return false;
  return true;
}

namespace {

// A field no tracer writes (a time past the year 2100: dftracer counts microseconds from 1970; a
// pid past 2^31): the line is foreign content, never converted to an integer it does not fit.
struct OutOfRange {};

// args' counts, pid and tid: integers of JSON, or numbers that fit 64 bits.
std::int64_t whole(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  const double d = v.get<double>();  // a type error for anything but a number
  if (!(d >= -9.0e18 && d <= 9.0e18)) throw OutOfRange{};
  return static_cast<std::int64_t>(d);
}

// 2100-01-01 in microseconds of the Unix epoch: a time and a duration below it sum to less than
// 2^63 nanoseconds.
constexpr double kLatestUs = 4102444800e6;

// Microseconds of a trace (ts, dur) in nanoseconds: exactly when given as an integer (dftracer's
// 16-digit times do not fit a double's 53 bits once made nanoseconds).
std::int64_t ns_of_us(const nlohmann::json& v) {
  if (v.is_number_integer()) {
    const std::int64_t us = v.get<std::int64_t>();
    if (us < 0 || static_cast<double>(us) > kLatestUs) throw OutOfRange{};
    return us * 1000;
  }
  const double us = v.get<double>();  // a type error for anything but a number
  if (!(us >= 0 && us <= kLatestUs)) throw OutOfRange{};
  return static_cast<std::int64_t>(us * 1000.0);
}

}  // namespace

PfwReader::PfwReader(std::string name, EventSink sink) : name_(std::move(name)), sink_(std::move(sink)) {}

void PfwReader::line(std::string_view s) {
  ++lines_;
  try {
    event(s);
  } catch (const nlohmann::json::exception&) {  // a field of the wrong type: foreign content
    foreign(s);
  } catch (const OutOfRange&) {
    foreign(s);
  }
}

void PfwReader::foreign(std::string_view s) {
  if (foreign_++ == 0) first_foreign_line_ = lines_, first_foreign_ = std::string(s.substr(0, 80));
}

void PfwReader::event(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == ',')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  if (s.empty() || s == "[" || s == "]") return;
  const nlohmann::json j = nlohmann::json::parse(s, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    foreign(s);
    return;
  }
  const std::string name = j.value("name", "");
  if (j.value("cat", "") == "dftracer") dftracer_ = true;
  const auto args = j.find("args");
  const std::string ph = j.value("ph", "");
  if (ph == "M") {
    if (name == "FH" && args != j.end() && args->is_object() && args->contains("name") && args->contains("value")) {
      const auto& v = (*args)["value"];
      paths_[v.is_string() ? v.get<std::string>() : v.dump()] = (*args)["name"].get<std::string>();
    }
    return;
  }
  ++events_;
  if (j.contains("ts"))  // any event moves the trace's end: a replay's last steps read nothing
    last_ns_ = std::max(last_ns_, ns_of_us(j["ts"]) + (j.contains("dur") ? ns_of_us(j["dur"]) : 0));
  // DLIO's frameworks span each step's emulated compute (TorchFramework.compute, TFFramework.compute).
  if (j.value("cat", "") == "ai_framework" && name.ends_with("Framework.compute") && j.contains("ts") && j.contains("dur")) {
    Event step;
    step.call = Call::step;
    step.start_ns = ns_of_us(j["ts"]);
    step.dur_ns = ns_of_us(j["dur"]);
    sink_(step);
    return;
  }
  Call call;
  if (j.value("cat", "") != "POSIX" || !pfw_call(name, &call)) return;
  if (call == Call::stat) ++stats_;
  Event e;
  e.call = call;
  const std::int64_t pid = j.contains("pid") ? whole(j["pid"]) : 0, tid = j.contains("tid") ? whole(j["tid"]) : 0;
  if (pid < 0 || pid >= (1LL << 31) || tid < 0 || tid >= (1LL << 31)) throw OutOfRange{};
  e.pid = pid * 1'000'000 + tid;  // threads are the loaders' workers
  e.start_ns = j.contains("ts") ? ns_of_us(j["ts"]) : 0;
  e.dur_ns = j.contains("dur") ? ns_of_us(j["dur"]) : -1;
  std::string path;
  if (args != j.end() && args->is_object()) {
    if (args->contains("fname")) path = (*args)["fname"].get<std::string>();
    else if (args->contains("fhash")) {
      const auto& h = (*args)["fhash"];
      auto it = paths_.find(h.is_string() ? h.get<std::string>() : h.dump());
      if (it != paths_.end()) path = it->second;
    }
    auto count = [&](const char* key, std::int64_t* out) {
      auto it = args->find(key);
      if (it == args->end() || !it->is_number()) return false;
      *out = whole(*it);
      return true;
    };
    std::int64_t v = 0;
    if ((call == Call::read || call == Call::write) && count("ret", &v)) {
      e.failed = v < 0;
      e.bytes = v < 0 ? 0 : static_cast<std::uint64_t>(v);
    } else if (count("size", &v) && v >= 0) {
      e.bytes = static_cast<std::uint64_t>(v);
    }
    if (count("offset", &v) && v >= 0) e.offset = static_cast<std::uint64_t>(v), e.has_offset = true;
    // A seek moves the position to its result (dftracer's lseek64: args offset, whence, ret); an
    // offset alone is where it went only from the start (whence 0, or none given).
    std::int64_t whence = 0;
    if (call == Call::seek && count("ret", &v)) {
      e.has_offset = v >= 0;
      e.offset = v >= 0 ? static_cast<std::uint64_t>(v) : 0;
    } else if (call == Call::seek && count("whence", &whence) && whence != SEEK_SET) {
      e.has_offset = false;
    }
    if (call == Call::open) {
      std::int64_t flags = 0;
      const std::string mode = args->value("mode", "");
      e.for_write = (count("flags", &flags) && (flags & 0103)) || mode.find_first_of("wa+") != std::string::npos;
    }
  }
  // Calls without an offset (buffered reads) continue where the same thread's last call on the
  // file ended or its last seek went, as the descriptor's position does.
  if (!path.empty() && call == Call::close) positions_.erase(std::to_string(e.pid) + '\n' + path);
  if (!path.empty() && (call == Call::open || call == Call::read || call == Call::write || call == Call::seek)) {
    std::uint64_t& pos = positions_[std::to_string(e.pid) + '\n' + path];
    if (call == Call::open) pos = 0;
    else if (e.has_offset) pos = e.offset + (call == Call::seek ? 0 : e.bytes);
    else if (call != Call::seek) e.offset = pos, e.has_offset = true, pos += e.bytes;
  }
  e.path = path;
  sink_(e);
}

void PfwReader::finish() {
  if (last_ns_ > 0) {
    Event end;
    end.call = Call::mark;
    end.start_ns = last_ns_;
    sink_(end);
  }
  if (lines_ > 0 && (events_ == 0 || foreign_ * 20 > lines_))
    throw usage_error(fmt::format("{} is not a .pfw trace: {} of its {} lines are not JSON trace events{}", name_, foreign_,
                                  lines_, foreign_ ? fmt::format(" (line {}: '{}')", first_foreign_line_, first_foreign_) : ""),
                      "give the trace-*.pfw files of a run with --trace (or DLIO's dftracer traces), gzip or not");
}

}  // namespace trainio::capture
