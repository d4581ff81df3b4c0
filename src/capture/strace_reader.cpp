#include "capture/strace_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "util/error.hpp"

namespace trainio::capture {

const char* call_name(Call c) {
  static const char* const names[] = {"open", "close", "read", "write", "stat", "seek", "mmap", "fsync", "spawn", "mark", "step"};
  return names[static_cast<int>(c)];
}

namespace {

using strace_syntax::number;
using strace_syntax::split_args;
using strace_syntax::unquote;

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

std::string_view next_word(std::string_view& s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  const std::size_t end = s.find(' ');
  std::string_view w = s.substr(0, end);
  s.remove_prefix(end == std::string_view::npos ? s.size() : end);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return w;
}

// Whole seconds whose nanoseconds fit 64 bits with room for days added: a time strace writes
// (-ttt since 1970 is ~1.7 x 10^9 s) or a call's duration.
constexpr long long kMostSeconds = 4'000'000'000;

bool looks_like_time(std::string_view w) {
  if (w.empty() || !std::isdigit(static_cast<unsigned char>(w.front()))) return false;
  for (char c : w)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) return false;
  const std::string_view whole = w.substr(0, w.find('.'));
  const auto colons = std::count(whole.begin(), whole.end(), ':');
  if (colons > 2 || (colons == 0 && (whole.size() > 10 || number(whole) > kMostSeconds))) return false;
  for (std::size_t start = 0; colons > 0 && start <= whole.size();) {  // HH:MM:SS, each of 1-2 digits
    const std::size_t colon = whole.find(':', start);
    const std::size_t digits = (colon == std::string_view::npos ? whole.size() : colon) - start;
    if (digits == 0 || digits > 2) return false;
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return colons > 0 || w.find('.') != std::string_view::npos;
}

// The matching ')' of a call whose arguments start at `from`: strings and brackets nest.
std::size_t closing_paren(std::string_view s, std::size_t from) {
  const std::size_t end = strace_syntax::scan_outside_strings(s, from, [](std::size_t, char c, int depth) {
    return depth == 0 && (c == ')' || c == '}' || c == ']');
  });
  return end != std::string_view::npos && s[end] == ')' ? end : std::string_view::npos;
}

// A descriptor argument: "3", or "3</path>" (strace -y).
int fd_of(std::string_view arg, std::string_view* path = nullptr) {
  bool ok = false;
  const long long v = number(arg, &ok);
  if (!ok) return arg.starts_with("AT_FDCWD") ? -100 : -1;
  const std::size_t lt = arg.find('<');
  if (path && lt != std::string_view::npos && arg.back() == '>') *path = arg.substr(lt + 1, arg.size() - lt - 2);
  return static_cast<int>(v);
}

// st_size=N or stx_size=N inside a stat structure.
std::uint64_t size_in(std::string_view arg) {
  for (std::string_view key : {std::string_view("st_size="), std::string_view("stx_size=")}) {
    const std::size_t at = arg.find(key);
    if (at != std::string_view::npos) return static_cast<std::uint64_t>(number(arg.substr(at + key.size())));
  }
  return 0;
}

bool interesting(std::string_view name) {
  static const std::string_view names[] = {
      "openat", "open", "creat", "openat2", "close", "read", "readv", "write", "writev", "pread64", "preadv", "preadv2",
      "pwrite64", "pwritev", "pwritev2", "lseek", "llseek", "_llseek", "fstat", "fstat64", "newfstatat", "fstatat64",
      "statx", "stat", "lstat", "stat64", "lstat64", "access", "faccessat", "faccessat2", "mmap", "mmap2", "fsync",
      "fdatasync", "dup", "dup2", "dup3", "fcntl", "clone", "clone3", "fork", "vfork"};
  for (auto n : names)
    if (n == name) return true;
  return false;
}

bool opens_for_write(std::string_view flags) {
  return flags.find("O_WRONLY") != std::string_view::npos || flags.find("O_RDWR") != std::string_view::npos ||
         flags.find("O_CREAT") != std::string_view::npos;
}

}  // namespace

StraceReader::StraceReader(std::string name, EventSink sink, long default_pid)
    : name_(std::move(name)), sink_(std::move(sink)), default_pid_(default_pid) {}
StraceReader::~StraceReader() = default;

std::shared_ptr<StraceReader::FdTable>& StraceReader::table(long pid) {
  auto& t = tables_[pid];
  if (!t) t = std::make_shared<FdTable>();
  return t;
}

std::int64_t StraceReader::parse_time(std::string_view t) {
  std::int64_t ns = 0;
  const std::size_t dot = t.find('.');
  std::string_view whole = t.substr(0, dot), frac = dot == std::string_view::npos ? std::string_view() : t.substr(dot + 1);
  if (whole.find(':') != std::string_view::npos) {  // -t / -tt: HH:MM:SS since midnight
    std::int64_t secs = 0;
    std::size_t start = 0;
    while (start <= whole.size()) {
      const std::size_t colon = whole.find(':', start);
      secs = secs * 60 + number(whole.substr(start, colon - start));
      if (colon == std::string_view::npos) break;
      start = colon + 1;
    }
    ns = secs * 1'000'000'000;
  } else {  // -ttt: seconds since the epoch
    ns = number(whole) * 1'000'000'000;
  }
  std::int64_t scale = 100'000'000;
  for (char c : frac.substr(0, 9)) ns += (c - '0') * scale, scale /= 10;
  ns += day_ns_;
  // -tt restarts at midnight: a jump back of more than 12 hours is the next day. No job runs for
  // years: a trace whose clock went round that often is not a trace (and its time would overflow).
  if (ns + 43'200'000'000'000 < last_time_ns_) {
    day_ns_ += 86'400'000'000'000, ns += 86'400'000'000'000;
    if (day_ns_ > 3660 * 86'400'000'000'000LL)
      throw usage_error(fmt::format("{}: its times go back past midnight more than 3,660 times", name_),
                        "give a trace strace wrote (strace -f -tt -T -o FILE)");
  }
  last_time_ns_ = ns;
  return ns;
}

void StraceReader::bad(std::string_view text) {
  if (foreign_++ == 0) {
    first_foreign_line_ = lines_;
    first_foreign_ = std::string(text.substr(0, 80));
  }
}

void StraceReader::line(std::string_view s) {
  ++lines_;
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  if (s.find_first_not_of(' ') == std::string_view::npos) return;
  const std::string_view whole = s;
  long pid = default_pid_;
  std::int64_t start_ns = 0;
  if (s.starts_with("[pid ")) {  // strace writing to a terminal: "[pid  1234] "
    s.remove_prefix(5);
    const std::string_view w = next_word(s);
    pid = static_cast<long>(number(w));
  } else {
    std::string_view rest = s;
    const std::string_view w = next_word(rest);
    if (is_digits(w) && !rest.empty() && (looks_like_time(rest.substr(0, rest.find(' '))) || std::isalpha(static_cast<unsigned char>(rest.front())) || rest.front() == '<' || rest.front() == '+' || rest.front() == '-')) {
      pid = static_cast<long>(number(w));
      s = rest;
    }
  }
  {
    std::string_view rest = s;
    const std::string_view w = next_word(rest);
    if (looks_like_time(w)) {
      start_ns = parse_time(w);
      s = rest;
    }
  }
  if (s.starts_with("+++") || s.starts_with("---")) return;  // exits and signals
  // The duration (-T) ends the line: "<0.000014>".
  std::int64_t dur_ns = -1;
  std::string_view body = s;
  if (body.ends_with(">") && !body.ends_with("<unfinished ...>")) {
    const std::size_t lt = body.rfind('<');
    if (lt != std::string_view::npos && lt + 1 < body.size() && std::isdigit(static_cast<unsigned char>(body[lt + 1]))) {
      const std::string_view d = body.substr(lt + 1, body.size() - lt - 2);
      const std::size_t dot = d.find('.');
      bool ok = false;
      if (const long long secs = number(d.substr(0, dot), &ok); ok && secs <= kMostSeconds) {  // else: no duration
        std::int64_t ns = secs * 1'000'000'000, scale = 100'000'000;
        if (dot != std::string_view::npos)
          for (char c : d.substr(dot + 1, 9)) ns += std::isdigit(static_cast<unsigned char>(c)) ? (c - '0') * scale : 0, scale /= 10;
        dur_ns = ns;
      }
      body = body.substr(0, lt);
      while (!body.empty() && body.back() == ' ') body.remove_suffix(1);
    }
  }
  if (body.starts_with("<... ")) {  // "<... read resumed>REST"
    const std::size_t end = body.find(" resumed>");
    if (end == std::string_view::npos) return bad(whole);
    const std::string_view name = body.substr(5, end - 5);
    auto it = pending_.find(pid);
    if (it == pending_.end() || it->second.name != name) {
      ++calls_;  // its start was not in this trace (or was cut): the call is counted, not used
      return;
    }
    Pending p = std::move(it->second);
    pending_.erase(it);
    p.args.append(body.substr(end + 9));
    std::string_view joined = p.args;
    const std::size_t close = closing_paren(joined, 0);
    if (close == std::string_view::npos) return bad(whole);
    std::string_view result = joined.substr(close + 1);
    call(pid, p.name, joined.substr(0, close), result, p.start_ns,
         dur_ns >= 0 ? dur_ns : (start_ns > 0 ? start_ns - p.start_ns : -1));
    return;
  }
  const std::size_t paren = body.find('(');
  if (paren == 0 || paren == std::string_view::npos) return bad(whole);
  const std::string_view name = body.substr(0, paren);
  for (char c : name)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return bad(whole);
  if (body.ends_with("<unfinished ...>")) {
    std::string_view args = body.substr(paren + 1, body.size() - paren - 1 - 16);
    while (!args.empty() && args.back() == ' ') args.remove_suffix(1);
    pending_[pid] = Pending{std::string(name), std::string(args), start_ns};
    return;
  }
  const std::size_t close = closing_paren(body, paren + 1);
  if (close == std::string_view::npos) return bad(whole);
  call(pid, name, body.substr(paren + 1, close - paren - 1), body.substr(close + 1), start_ns, dur_ns);
}

std::string StraceReader::resolve(long pid, std::string_view dirfd, std::string path) {
  if (path.empty() || path.front() == '/') return path;
  std::string_view dir_path;
  const int dfd = fd_of(dirfd, &dir_path);
  if (dfd >= 0 && dir_path.empty()) {
    auto& t = *table(pid);
    auto it = t.find(dfd);
    if (it != t.end()) dir_path = it->second.path;
  }
  if (dir_path.empty()) return path;  // relative to a working directory the trace does not show
  return std::string(dir_path) + "/" + path;
}

void StraceReader::call(long pid, std::string_view name, std::string_view args_text, std::string_view result,
                        std::int64_t start_ns, std::int64_t dur_ns) {
  ++calls_;
  if (!interesting(name)) return;  // most of a job's calls (futex, poll, signals) touch no file
  std::string_view a[8];
  const int n = split_args(args_text, a, 8);
  // The result: " = 3", " = -1 ENOENT (No such file ...)", " = ?"
  const std::size_t eq = result.find('=');
  const std::size_t value = eq == std::string_view::npos ? eq : result.find_first_not_of(' ', eq + 1);
  bool have_result = false;
  const long long ret = value == std::string_view::npos ? 0 : number(result.substr(value), &have_result);
  const bool failed = !have_result || ret < 0;
  Event e;
  e.pid = pid;
  e.start_ns = start_ns;
  e.dur_ns = dur_ns;
  e.failed = failed;
  auto& fds = *table(pid);
  auto on_fd = [&](int arg) -> Fd* {
    if (arg >= n) return nullptr;
    std::string_view shown;
    const int fd = fd_of(a[arg], &shown);
    auto it = fds.find(fd);
    if (it == fds.end()) {
      if (shown.empty() || shown.front() != '/') return nullptr;
      it = fds.emplace(fd, Fd{std::string(shown), 0}).first;  // opened before the trace began (-y names it)
    }
    e.path = it->second.path;
    return &it->second;
  };
  const auto send = [&](Call c) {
    e.call = c;
    sink_(e);
  };

  if (name == "openat" || name == "open" || name == "creat" || name == "openat2") {
    const bool at = name == "openat" || name == "openat2";
    if (n < (at ? 2 : 1)) return;
    std::string path = resolve(pid, at ? a[0] : std::string_view("AT_FDCWD"), unquote(a[at ? 1 : 0]));
    const std::string_view flags = n > (at ? 2 : 1) ? a[at ? 2 : 1] : std::string_view();
    e.for_write = name == "creat" || opens_for_write(flags);
    e.path = path;
    // A directory's descriptor only resolves relative paths: its open is no file's.
    const bool directory = flags.find("O_DIRECTORY") != std::string_view::npos;
    if (!directory) send(Call::open);
    if (!failed) fds[static_cast<int>(ret)] = Fd{std::move(path), 0, directory};
  } else if (name == "close") {
    Fd* f = on_fd(0);
    if (!f) return;
    if (!f->directory) send(Call::close);
    fds.erase(fd_of(a[0]));
  } else if (name == "read" || name == "readv" || name == "write" || name == "writev") {
    Fd* f = on_fd(0);
    if (!f) return;
    e.bytes = failed ? 0 : static_cast<std::uint64_t>(ret);
    e.offset = f->pos;
    e.has_offset = true;
    f->pos += e.bytes;
    send(name[0] == 'r' ? Call::read : Call::write);
  } else if (name == "pread64" || name == "preadv" || name == "preadv2" || name == "pwrite64" || name == "pwritev" ||
             name == "pwritev2") {
    if (!on_fd(0) || n < 4) return;
    e.bytes = failed ? 0 : static_cast<std::uint64_t>(ret);
    e.offset = static_cast<std::uint64_t>(number(a[3]));
    e.has_offset = true;
    send(name[1] == 'r' ? Call::read : Call::write);
  } else if (name == "lseek" || name == "llseek" || name == "_llseek") {
    Fd* f = on_fd(0);
    if (!f) return;
    if (!failed && name == "lseek") f->pos = static_cast<std::uint64_t>(ret);
    send(Call::seek);
  } else if (name == "fstat" || name == "fstat64") {
    if (!on_fd(0)) return;
    e.file_size = n > 1 ? size_in(a[1]) : 0;
    send(Call::stat);
  } else if (name == "newfstatat" || name == "fstatat64" || name == "statx") {
    if (n < 3) return;
    const std::string path = unquote(a[1]);
    std::string resolved;
    if (path.empty()) {
      if (!on_fd(0)) return;
    } else {
      resolved = resolve(pid, a[0], path);
      e.path = resolved;
    }
    e.file_size = size_in(a[name == "statx" ? 4 : 2]);
    send(Call::stat);
  } else if (name == "stat" || name == "lstat" || name == "stat64" || name == "lstat64" || name == "access" ||
             name == "faccessat" || name == "faccessat2") {
    if (n < 1) return;
    const bool at = name.starts_with("facc");
    const std::string path = resolve(pid, at ? a[0] : std::string_view("AT_FDCWD"), unquote(a[at ? 1 : 0]));
    e.path = path;
    if (n > 1 && !at) e.file_size = size_in(a[1]);
    send(Call::stat);
  } else if (name == "mmap" || name == "mmap2") {
    if (n < 6 || fd_of(a[4]) < 0 || !on_fd(4)) return;
    e.bytes = static_cast<std::uint64_t>(number(a[1]));
    e.offset = static_cast<std::uint64_t>(number(a[5]));
    e.has_offset = true;
    send(Call::mmap);
  } else if (name == "fsync" || name == "fdatasync") {
    if (!on_fd(0)) return;
    send(Call::fsync);
  } else if (name == "dup" || name == "dup2" || name == "dup3" || (name == "fcntl" && n > 1 && a[1].starts_with("F_DUPFD"))) {
    auto it = fds.find(fd_of(a[0]));
    if (failed || it == fds.end()) return;
    Fd copy = it->second;
    fds[static_cast<int>(ret)] = std::move(copy);
  } else if (name == "clone" || name == "clone3" || name == "fork" || name == "vfork") {
    if (failed || ret <= 0) return;
    const long child = static_cast<long>(ret);
    e.child = child;
    e.shares_files = args_text.find("CLONE_FILES") != std::string_view::npos;
    auto& parent = table(pid);
    auto& mine = tables_[child];
    if (e.shares_files) {
      if (mine && mine != parent)  // the child's calls came first: they belong to the shared table
        for (auto& [fd, f] : *mine) parent->emplace(fd, f);
      mine = parent;
    } else {
      auto copy = std::make_shared<FdTable>(*parent);
      if (mine)
        for (auto& [fd, f] : *mine) (*copy)[fd] = f;
      mine = copy;
    }
    send(Call::spawn);
  }
}

void StraceReader::finish() {
  if (last_time_ns_ > 0) {
    Event end;
    end.call = Call::mark;
    end.pid = default_pid_;
    end.start_ns = last_time_ns_;
    sink_(end);
  }
  const std::uint64_t understood = lines_ - foreign_;
  if (lines_ > 0 && (understood == 0 || foreign_ * 20 > lines_))
    throw usage_error(fmt::format("{} is not strace output: line {} reads '{}', and {} of its {} lines are not "
                                  "strace's",
                                  name_, first_foreign_line_, first_foreign_, foreign_, lines_),
                      "give the file 'strace -f -tt -T -o FILE' wrote (or -ff files), a .pfw trace or darshan-dxt-parser "
                      "output");
}

void read_strace(std::istream& in, const std::string& name, const EventSink& sink, long default_pid) {
  StraceReader reader(name, sink, default_pid);
  std::string text;
  while (std::getline(in, text)) reader.line(text);
  reader.finish();
}

}  // namespace trainio::capture
