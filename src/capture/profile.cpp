#include "capture/profile.hpp"

#include <algorithm>

namespace trainio::capture {

const char* tracer_name(Tracer t) {
  switch (t) {
    case Tracer::strace: return "strace";
    case Tracer::pfw: return "pfw";
    case Tracer::darshan: return "darshan";
  }
  return "?";
}

std::uint32_t FileStats::passes() const {
  if (offsets.empty()) return 0;
  // The byte-weighted median of the counts: headers re-read per load (np.load reads offset 0 three
  // times) and metadata read once (h5py caches it) weigh little against the data.
  std::vector<Offset> by_times(offsets);
  std::sort(by_times.begin(), by_times.end(), [](const Offset& a, const Offset& b) { return a.times < b.times; });
  double total = 0, seen = 0;
  for (const auto& o : by_times) total += static_cast<double>(o.bytes) * o.times;
  for (const auto& o : by_times) {
    seen += static_cast<double>(o.bytes) * o.times;
    if (seen * 2 >= total) return o.times;
  }
  return by_times.back().times;
}

// Reads smaller than this (HDF5's metadata, headers) do not count for the order of a file's reads.
constexpr std::uint64_t kOrderedRead = 4096;

bool Profile::is_data_path(std::string_view p) {
  if (p.empty() || p.find(":[") != std::string_view::npos || p.starts_with("anon_inode:")) return false;
  for (std::string_view prefix : {"/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/", "/etc/", "/proc/", "/sys/", "/dev/",
                                  "/run/", "/var/lib/", "/var/cache/"})
    if (p.starts_with(prefix)) return false;
  for (std::string_view part : {"/site-packages/", "/dist-packages/", "/__pycache__/", "/.cache/"})
    if (p.find(part) != std::string_view::npos) return false;
  const std::size_t slash = p.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? p : p.substr(slash + 1);
  if (base.ends_with(".py") || base.ends_with(".pyc") || base.ends_with(".so") || base.find(".so.") != std::string_view::npos)
    return false;
  return true;
}

std::uint32_t Profile::dir(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  const std::string_view d = slash == std::string_view::npos ? std::string_view(".") : path.substr(0, slash);
  auto it = dir_index_.find(d);
  if (it != dir_index_.end()) return it->second;
  const auto index = static_cast<std::uint32_t>(dirs_.size());
  dirs_.emplace_back().path = std::string(d);
  dir_index_.emplace(std::string(d), index);
  return index;
}

std::uint32_t Profile::file(std::string_view path) {
  auto it = file_index_.find(path);
  if (it != file_index_.end()) return it->second;
  const auto index = static_cast<std::uint32_t>(files_.size());
  FileStats& f = files_.emplace_back();
  f.path = std::string(path);
  f.dir = dir(path);
  dirs_[f.dir].files.push_back(index);
  file_index_.emplace(f.path, index);
  return index;
}

void Profile::add(const Event& e) {
  ++events_;
  end_ns_ = std::max(end_ns_, e.start_ns + std::max<std::int64_t>(e.dur_ns, 0));
  if (e.call == Call::mark) return;
  if (e.call == Call::step) {
    ++steps_;
    step_ns_ += std::max<std::int64_t>(e.dur_ns, 0);
    return;
  }
  if (first_pid_ == 0) first_pid_ = e.pid;
  ProcessStats& proc = processes_[e.pid];
  proc.pid = e.pid;
  if (e.call == Call::spawn) {
    ProcessStats& child = processes_[e.child];
    child.pid = e.child;
    child.parent = e.pid;
    child.thread = e.shares_files;
    return;
  }
  if (e.call == Call::open && e.for_write && !e.failed && e.path.starts_with("/dev/shm/torch_") &&
      proc.opens_since_handoff > 0) {
    ++proc.batches_handed;
    proc.opens_handed += proc.opens_since_handoff;
    proc.opens_since_handoff = 0;
  }
  if (!is_data_path(e.path)) return;
  if (first_ns_ < 0 || e.start_ns < first_ns_) first_ns_ = e.start_ns;
  last_ns_ = std::max(last_ns_, e.start_ns + std::max<std::int64_t>(e.dur_ns, 0));
  const std::uint32_t fi = file(e.path);
  FileStats& f = files_[fi];
  DirStats& d = dirs_[f.dir];
  ++f.calls[static_cast<int>(e.call)];
  ++d.calls[static_cast<int>(e.call)];
  if (f.first_ns < 0) f.first_ns = e.start_ns;
  f.last_ns = std::max(f.last_ns, e.start_ns);
  if (e.file_size > f.size && !e.failed) f.size = e.file_size;
  switch (e.call) {
    case Call::open:
      if (e.for_write) {
        f.opened_for_write = true;
        break;
      }
      if (e.failed) break;
      if (proc.last_open_file != UINT32_MAX && files_[proc.last_open_file].dir == f.dir && proc.last_open_file != fi) {
        ++d.visit_pairs;
        if (files_[proc.last_open_file].path < f.path) ++d.visit_up;
      }
      proc.last_open_file = fi;
      ++proc.opens_since_handoff;
      if (proc.visits.size() < ProcessStats::kVisitsKept) proc.visits.emplace_back(f.dir, e.start_ns);
      break;
    case Call::read: {
      if (e.failed) break;
      f.read_bytes += e.bytes;
      d.read_bytes += e.bytes;
      if (e.has_offset) {
        f.extent = std::max(f.extent, e.offset + e.bytes);
        auto it = std::find_if(f.offsets.begin(), f.offsets.end(), [&](const auto& o) { return o.offset == e.offset; });
        if (it != f.offsets.end()) ++it->times;
        else if (f.offsets.size() < FileStats::kOffsetsKept && e.bytes > 0)
          f.offsets.push_back({e.offset, 1, static_cast<std::uint32_t>(std::min<std::uint64_t>(e.bytes, UINT32_MAX))});
        if (proc.last_read_file == fi && e.bytes >= kOrderedRead) {
          ++d.read_pairs;
          if (e.offset >= proc.last_read_offset) ++d.read_up;
        }
        if (e.bytes >= kOrderedRead) proc.last_read_file = fi, proc.last_read_offset = e.offset + e.bytes;
      }
      if (e.bytes == 0) break;  // end of file: no data moved
      d.read_sizes.add(e.bytes);
      if (d.last_read_ns >= 0 && e.start_ns >= d.last_read_ns)
        d.inter_arrival.add(static_cast<std::uint64_t>(e.start_ns - d.last_read_ns));
      d.last_read_ns = e.start_ns;
      if (d.first_read_ns < 0) d.first_read_ns = e.start_ns;
      if (e.dur_ns >= 0) {
        d.read_latency.add(static_cast<std::uint64_t>(e.dur_ns));
        d.busy_ns += static_cast<double>(e.dur_ns);
        auto& ends = d.in_flight_ends;
        ends.erase(std::remove_if(ends.begin(), ends.end(), [&](std::int64_t end) { return end <= e.start_ns; }), ends.end());
        d.depth_sum += static_cast<double>(ends.size() + 1);
        ++d.depth_count;
        ends.push_back(e.start_ns + e.dur_ns);
      }
      d.last_read_end_ns = std::max(d.last_read_end_ns, e.start_ns + std::max<std::int64_t>(e.dur_ns, 0));
      ++proc.reads;
      if (proc.first_read_ns < 0) proc.first_read_ns = e.start_ns;
      proc.last_read_ns = e.start_ns;
      proc.read_bytes += e.bytes;
      if (std::find(proc.read_dirs.begin(), proc.read_dirs.end(), f.dir) == proc.read_dirs.end())
        proc.read_dirs.push_back(f.dir);
      break;
    }
    case Call::write:
      if (e.failed) break;
      f.write_bytes += e.bytes;
      if (e.bytes > FileStats::kLargeWrite && f.large_writes.size() < FileStats::kLargeWritesKept)
        f.large_writes.push_back(e.bytes);
      d.write_bytes += e.bytes;
      if (e.has_offset) f.extent = std::max(f.extent, e.offset + e.bytes);
      if (e.bytes) d.write_sizes.add(e.bytes, e.bytes);  // by bytes: where a checkpoint's bytes go
      if (d.first_write_ns < 0) d.first_write_ns = e.start_ns;
      d.last_write_ns = std::max(d.last_write_ns, e.start_ns);
      ++proc.writes;
      break;
    default:
      break;
  }
}

}  // namespace trainio::capture
