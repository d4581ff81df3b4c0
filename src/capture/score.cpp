#include "capture/score.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "capture/infer.hpp"

namespace trainio::capture {

double ratio(double a, double b) {
  if (a == 0 && b == 0) return 1;
  if (a <= 0 || b <= 0) return 0;
  return std::min(a, b) / std::max(a, b);
}

double octave_closeness(double a, double b, double scale) {
  if (a <= 0 && b <= 0) return 1;
  if (a <= 0 || b <= 0) return 0;
  return std::clamp(1.0 - std::abs(std::log2(a / b)) / scale, 0.0, 1.0);
}

std::optional<double> closeness(const LogHistogram& a, const LogHistogram& b, double scale) {
  const double apart = octaves_apart(a, b);
  if (apart < 0) return std::nullopt;
  return std::clamp(1.0 - apart / scale, 0.0, 1.0);
}

namespace {

// The figures of one side that the parts compare.
struct Side {
  const DirStats* data = nullptr;
  std::vector<const FileStats*> files;  // dataset files read
  double epochs = 1;
  LogHistogram file_sizes;
  std::uint64_t written_bytes = 0, written_files = 0;
  LogHistogram write_sizes;
  double save_gap_s = -1;  // the median time from one written file's last write to the next's first
  double up = -1;  // fraction of consecutive accesses in order
  bool up_from_files = false;
};

Side side_of(const Profile& p) {
  Side s;
  if (const auto ds = dataset_dir(p)) {
    s.data = &p.dirs()[*ds];
    std::vector<std::uint32_t> passes;
    for (std::uint32_t i : s.data->files)
      if (p.files()[i].read_bytes > 0) {
        s.files.push_back(&p.files()[i]);
        s.file_sizes.add(p.files()[i].known_size());
        passes.push_back(p.files()[i].passes());
      }
    std::sort(passes.begin(), passes.end());
    s.epochs = std::max<double>(1, passes.empty() ? 1 : passes[passes.size() / 2]);
    if (s.data->visit_pairs >= 8) {
      s.up = static_cast<double>(s.data->visit_up) / static_cast<double>(s.data->visit_pairs);
      s.up_from_files = true;
    } else if (s.data->read_pairs >= 8) {
      s.up = static_cast<double>(s.data->read_up) / static_cast<double>(s.data->read_pairs);
    }
  }
  // The time between saves, not their own: how long a save takes is the storage's (and the
  // tool's) answer, the pause between them the job's.
  std::vector<std::pair<std::int64_t, std::int64_t>> saves;  // first and last event of each file
  for (std::uint32_t i : written_files(p)) {
    s.written_bytes += p.files()[i].write_bytes;
    ++s.written_files;
    s.write_sizes.merge(p.dirs()[p.files()[i].dir].write_sizes);
    saves.emplace_back(p.files()[i].first_ns, p.files()[i].last_ns);
  }
  std::sort(saves.begin(), saves.end());
  std::vector<double> gaps;
  for (std::size_t i = 1; i < saves.size(); ++i)
    gaps.push_back(static_cast<double>(std::max<std::int64_t>(0, saves[i].first - saves[i - 1].second)) / 1e9);
  if (!gaps.empty()) {
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<long>(gaps.size() / 2), gaps.end());
    s.save_gap_s = gaps[gaps.size() / 2];
  }
  return s;
}

std::string num(double v) { return fmt::format("{:.4g}", v); }

}  // namespace

Score score(const Profile& real, const Profile& replay) {
  const Side a = side_of(real), b = side_of(replay);
  Score out;
  auto add = [&](std::string name, std::optional<double> s, std::string ra, std::string rb, std::string note = {}) {
    out.parts.push_back(ScorePart{std::move(name), s, std::move(ra), std::move(rb), std::move(note)});
  };
  if (a.data || b.data) {
    if (!a.data || !b.data) {
      add("dataset", 0.0, a.data ? a.data->path : "none", b.data ? b.data->path : "none", "only one trace reads a dataset");
    } else {
      const DirStats &da = *a.data, &db = *b.data;
      const double fa = static_cast<double>(a.files.size()), fb = static_cast<double>(b.files.size());
      auto per_file_epoch = [](const DirStats& d, double files, double epochs, Call c) {
        return static_cast<double>(d.calls[static_cast<int>(c)]) / files / epochs;
      };
      // Calls of a kind one tracer does not record are left out (Darshan's DXT: reads and writes only).
      auto both_record = [&](Call c) { return real.records(c) && replay.records(c); };
      double sum = 0;
      int kinds = 0;
      std::string ra, rb;
      for (Call c : {Call::read, Call::seek, Call::mmap}) {
        if (!both_record(c)) continue;
        const double x = per_file_epoch(da, fa, a.epochs, c), y = per_file_epoch(db, fb, b.epochs, c);
        sum += ratio(x + 1, y + 1);  // one call per file more or less is a small difference
        ++kinds;
        ra += fmt::format("{}{} {}", ra.empty() ? "" : ", ", call_name(c), num(x));
        rb += fmt::format("{}{} {}", rb.empty() ? "" : ", ", call_name(c), num(y));
      }
      add("calls_per_file", sum / kinds, ra, rb, "data calls per file per epoch, of the kinds both traces record");
      add("file_sizes", closeness(a.file_sizes, b.file_sizes, 3), num(static_cast<double>(a.file_sizes.quantile(0.5))),
          num(static_cast<double>(b.file_sizes.quantile(0.5))), "median file size, bytes");
      const double ba = static_cast<double>(da.read_bytes) / a.epochs, bb = static_cast<double>(db.read_bytes) / b.epochs;
      add("bytes_per_epoch", ratio(ba, bb), num(ba), num(bb));
      add("read_sizes", closeness(da.read_sizes, db.read_sizes, 3), num(static_cast<double>(da.read_sizes.quantile(0.5))),
          num(static_cast<double>(db.read_sizes.quantile(0.5))), "median read size, bytes");
      add("files_per_epoch", ratio(fa, fb), num(fa), num(fb));
      const double ta = static_cast<double>(real.end_ns() - da.first_read_ns) / 1e9 / a.epochs;
      const double tb = static_cast<double>(replay.end_ns() - db.first_read_ns) / 1e9 / b.epochs;
      add("epoch_time", ratio(ta, tb), num(ta), num(tb), "seconds from the first dataset read to the trace's end, per epoch");
      if (a.up >= 0 && b.up >= 0)
        add("order", std::clamp(1.0 - std::abs(a.up - b.up) / 0.5, 0.0, 1.0), num(a.up), num(b.up),
            a.up_from_files && b.up_from_files ? "share of a reader's consecutive opens going to a later file"
                                               : "share of consecutive accesses going forward");
      else
        add("order", std::nullopt, num(a.up), num(b.up), "too few consecutive accesses to tell an order");
      add("in_flight", ratio(da.mean_depth(), db.mean_depth()), num(da.mean_depth()), num(db.mean_depth()),
          "mean reads in flight as each read starts, itself included");
      const bool fine_times = std::max(real.time_step_ns(), replay.time_step_ns()) < 10'000;
      add("inter_arrival", fine_times ? closeness(da.inter_arrival, db.inter_arrival, 8) : std::nullopt,
          num(static_cast<double>(da.inter_arrival.quantile(0.5)) / 1e3), num(static_cast<double>(db.inter_arrival.quantile(0.5)) / 1e3),
          fine_times ? "median time between reads, us" : "left out: a trace's times are printed to 0.1 ms (DXT)");
      if (real.tracer() == replay.tracer())
        add("latency", closeness(da.read_latency, db.read_latency, 8), num(static_cast<double>(da.read_latency.quantile(0.5)) / 1e3),
            num(static_cast<double>(db.read_latency.quantile(0.5)) / 1e3), "median read latency, us");
      else
        add("latency", std::nullopt, tracer_name(real.tracer()), tracer_name(replay.tracer()),
            "traces from different tracers: strace's own cost per call is not in a .pfw's latencies");
      double meta = 0;
      std::string ma, mb;
      std::vector<Call> counted;
      for (Call c : {Call::open, Call::close, Call::stat})
        if (both_record(c)) counted.push_back(c);
      for (Call c : counted) {
        const double x = static_cast<double>(da.calls[static_cast<int>(c)]) / a.epochs;
        const double y = static_cast<double>(db.calls[static_cast<int>(c)]) / b.epochs;
        meta += ratio(x, y);
        ma += fmt::format("{}{} {}", ma.empty() ? "" : ", ", call_name(c), num(x));
        mb += fmt::format("{}{} {}", mb.empty() ? "" : ", ", call_name(c), num(y));
      }
      if (counted.empty())
        add("metadata", std::nullopt, "-", "-", "left out: a trace records no opens, closes or stats (DXT)");
      else
        add("metadata", meta / static_cast<double>(counted.size()), ma, mb,
            counted.size() == 3 ? "open, close and stat calls on the dataset per epoch"
                                : "calls on the dataset per epoch, of the kinds both traces record");
    }
  }
  if (a.written_files || b.written_files) {
    const auto sizes = closeness(a.write_sizes, b.write_sizes, 3);
    const double s = (ratio(static_cast<double>(a.written_bytes), static_cast<double>(b.written_bytes)) +
                      ratio(static_cast<double>(a.written_files), static_cast<double>(b.written_files)) + sizes.value_or(0)) /
                     3;
    add("checkpoints", s, fmt::format("{} files, {} bytes", a.written_files, a.written_bytes),
        fmt::format("{} files, {} bytes", b.written_files, b.written_bytes), "files and bytes written, write sizes");
    if (a.save_gap_s >= 0 || b.save_gap_s >= 0)
      add("checkpoint_cadence", a.save_gap_s >= 0 && b.save_gap_s >= 0 ? std::optional(ratio(a.save_gap_s, b.save_gap_s)) : 0.0,
          num(a.save_gap_s), num(b.save_gap_s), "median seconds from one written file's last call to the next's first");
  }
  double sum = 0;
  int n = 0;
  for (const auto& p : out.parts)
    if (p.score) sum += *p.score, ++n;
  out.total = n ? sum / n : 0;
  return out;
}

std::string score_text(const Score& s) {
  std::string out = fmt::format("{:<16} {:>6}  {:<40} {}\n", "part", "score", "real job", "replay");
  for (const auto& p : s.parts)
    out += fmt::format("{:<16} {:>6}  {:<40} {}{}\n", p.name, p.score ? fmt::format("{:.3f}", *p.score) : "n/a", p.real,
                       p.replay, p.note.empty() ? "" : "   (" + p.note + ")");
  out += fmt::format("{:<16} {:>6.3f}  mean of {} parts\n", "total", s.total,
                     std::count_if(s.parts.begin(), s.parts.end(), [](const ScorePart& p) { return p.score.has_value(); }));
  std::vector<const ScorePart*> worst;
  for (const auto& p : s.parts)
    if (p.score && *p.score < 0.999) worst.push_back(&p);
  std::sort(worst.begin(), worst.end(), [](const ScorePart* x, const ScorePart* y) { return *x->score < *y->score; });
  if (!worst.empty()) out += "largest differences:\n";
  for (std::size_t i = 0; i < worst.size() && i < 3; ++i)
    out += fmt::format("  {} ({:.3f}): real {} vs replay {}\n", worst[i]->name, *worst[i]->score, worst[i]->real, worst[i]->replay);
  return out;
}

std::string score_json(const Score& s) {
  nlohmann::json j;
  j["total"] = s.total;
  j["parts"] = nlohmann::json::array();
  for (const auto& p : s.parts) {
    nlohmann::json part{{"name", p.name}, {"real", p.real}, {"replay", p.replay}, {"note", p.note}};
    part["score"] = p.score ? nlohmann::json(*p.score) : nlohmann::json(nullptr);
    j["parts"].push_back(part);
  }
  return j.dump(2) + "\n";
}

}  // namespace trainio::capture
