// summary.json against what the records rebuild, figure by figure.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "verify/bottleneck.hpp"
#include "verify/run_totals.hpp"
#include "util/units.hpp"

namespace trainio::verify {

namespace {

using json = nlohmann::json;

// Figures of one part of the summary, named by their path in it.
class Part {
 public:
  // `node`: the part's own value in the summary (resolved once: an epoch's figures are hundreds).
  Part(const JsonValue& node, std::string path, Checks& checks) : node_(node), path_(std::move(path)), checks_(checks) {}
  Part sub(const std::string& key) const { return Part(find(node_, key), joined(key), checks_); }
  bool exists() const { return node_.valid(); }
  JsonValue at(const std::string& key) const { return key.empty() ? node_ : find(node_, key); }

  void number(const std::string& key, std::optional<double> v, Tolerance t = kRounding, bool headline = false) const {
    checks_.number(name(key), at(key), v, t, headline);
  }
  void count(const std::string& key, std::uint64_t v, bool headline = false) const {
    checks_.number(name(key), at(key), static_cast<double>(v), kExact, headline);
  }
  void text(const std::string& key, const std::string& v, bool headline = false) const {
    checks_.text(name(key), at(key), v, headline);
  }
  void flag(const std::string& key, bool v) const { checks_.flag(name(key), at(key), v); }
  void problem(const std::string& what) const { checks_.problem(name(""), what); }
  // The number of entries of the list at `key`.
  void entries(const std::string& key, std::uint64_t v) const {
    const JsonValue list = at(key);
    const json size = list.valid() && list.is_array() ? json(list.size()) : json();
    checks_.number(name(key) + ".length", list.valid() ? &size : nullptr, static_cast<double>(v), kExact);
  }

 private:
  std::string joined(const std::string& key) const { return path_.empty() ? key : key.empty() ? path_ : path_ + "/" + key; }
  std::string name(const std::string& key) const {
    std::string n = joined(key);
    std::replace(n.begin(), n.end(), '/', '.');
    return n;
  }
  JsonValue node_;
  std::string path_;
  Checks& checks_;
};

std::optional<double> scaled(std::optional<double> v, double by) { return v ? std::optional<double>(*v * by) : std::nullopt; }

void latency(const Part& p, const Latency& l) {
  p.count("count", l.count());
  p.number("mean", l.mean() * 1e-9);
  p.number("p50", static_cast<double>(l.quantile(0.50)) * 1e-9);
  p.number("p90", static_cast<double>(l.quantile(0.90)) * 1e-9);
  p.number("p99", static_cast<double>(l.quantile(0.99)) * 1e-9);
  p.number("p99_9", static_cast<double>(l.quantile(0.999)) * 1e-9);
  p.number("max", static_cast<double>(l.max()) * 1e-9);
  if (l.bucketed() != l.count()) p.problem(fmt::format("the records' buckets hold {} values, their count says {}", l.bucketed(), l.count()));
}

void io(const Part& p, const Io& io) {
  for (const auto& [name, op] : io.ops) {
    const Part o = p.sub(name);
    if (!o.exists()) {
      o.problem("absent from the summary, present in the records");
      continue;
    }
    o.count("count", op.count);
    o.count("bytes", op.bytes);
    o.number("seconds", static_cast<double>(op.ns) * 1e-9);
    latency(o.sub("latency_seconds"), op.latency);
  }
}

const char* kSizeNames[10] = {"0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS"};

void profile(const Part& p, const Profile& a) {
  p.count("reads", a.reads);
  p.count("writes", a.writes);
  p.count("bytes_read", a.bytes_read);
  p.count("bytes_written", a.bytes_written);
  for (int b = 0; b < 10; ++b) {
    p.sub("read_size_histogram").count(kSizeNames[b], a.read_sizes[static_cast<std::size_t>(b)]);
    p.sub("write_size_histogram").count(kSizeNames[b], a.write_sizes[static_cast<std::size_t>(b)]);
  }
  p.count("sequential_reads", a.sequential_reads);
  p.count("consecutive_reads", a.consecutive_reads);
  p.count("sequential_writes", a.sequential_writes);
  p.count("consecutive_writes", a.consecutive_writes);
  p.count("metadata_calls", a.metadata_calls);
  p.number("metadata_seconds", static_cast<double>(a.metadata_ns) * 1e-9);
  p.number("data_seconds", static_cast<double>(a.data_ns) * 1e-9);
  // The union of the ranks' distinct files is estimated from their estimators together, which the
  // records do not keep: it lies between the largest rank's estimate and the sum of them (with the
  // estimator's 1.6% error on either side).
  if (const JsonValue d = p.at("distinct_files_estimate"); d.valid() && d.is_number()) {
    const double low = std::floor(a.files_low * 0.95), high = std::ceil(a.files_high * 1.05);
    p.number("distinct_files_estimate", std::clamp(d.f64(), low, high), kExact);  // a mismatch shows the bound
  } else {
    p.number("distinct_files_estimate", static_cast<double>(std::llround(a.files_low)), kExact);
  }
  // The most common sizes: exact when the ranks' tables together hold no more sizes than one table.
  if (a.sizes.size() <= 32) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> sorted(a.sizes.begin(), a.sizes.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.second != y.second ? x.second > y.second : x.first < y.first; });
    if (sorted.size() > 4) sorted.resize(4);
    const JsonValue common = p.at("common_access_sizes");
    p.entries("common_access_sizes", sorted.size());
    // As many as listed (a value that is no list counts one, as nlohmann's size() does).
    const std::size_t listed = !common.valid() || common.is_null() ? 0 : common.is_array() || common.is_object() ? common.size() : 1;
    for (std::size_t i = 0; i < sorted.size() && i < listed; ++i) {
      p.sub(fmt::format("common_access_sizes/{}", i)).count("bytes", sorted[i].first);
      p.sub(fmt::format("common_access_sizes/{}", i)).count("calls", sorted[i].second);
    }
  }
}

void characterization(const Part& p, const Io& io) {
  profile(p.sub("data_files"), io.data);
  profile(p.sub("other_files"), io.other);
}

void page_cache(const Part& p, const PageCache& c) {
  const CacheVerdict v = cache_verdict(c);
  p.text("verdict", v.verdict);
  p.number("resident_fraction", v.resident_fraction);
  p.text("method", v.method);
  p.count("probes", c.probes);
  p.count("probed_bytes", c.probed_pages * c.page_bytes);
  p.count("resident_bytes", c.resident_pages * c.page_bytes);
  p.count("read_bytes", c.read_bytes);
  p.count("direct_bytes", c.direct_bytes);
}

void requests(const Part& p, const Requests& r) {
  p.count("count", r.total.count());
  for (const auto& [k, v] : r.by_kind) p.sub("by_kind").count(k, v);
  for (const auto& [k, v] : r.by_status) p.sub("by_status").count(k == "0" ? "no_answer" : k, v);
  p.count("retries", r.retries);
  for (const auto& [k, v] : r.retries_by_status) p.sub("retries_by_status").count(k == "0" ? "no_answer" : k, v);
  p.count("bytes", r.bytes);
  latency(p.sub("first_byte_seconds"), r.first_byte);
  latency(p.sub("total_seconds"), r.total);
  p.entries("by_endpoint", r.by_endpoint.size());
  for (std::size_t i = 0; i < r.by_endpoint.size(); ++i) {
    const Part e = p.sub(fmt::format("by_endpoint/{}", i));
    const auto& x = r.by_endpoint[i];
    e.count("endpoint", i);
    e.count("count", x.count);
    e.count("retries", x.retries);
    e.count("bytes", x.bytes);
    latency(e.sub("first_byte_seconds"), x.first_byte);
    latency(e.sub("total_seconds"), x.total);
  }
}

std::optional<double> ratio(std::uint64_t part, std::uint64_t whole) {
  return whole > 0 ? std::optional<double>(static_cast<double>(part) / static_cast<double>(whole)) : std::nullopt;
}

void tier(const Part& p, const Tier& t) {
  p.number("hit_ratio_samples", ratio(t["hit_samples"], t["hit_samples"] + t["miss_samples"]));
  p.number("hit_ratio_bytes", ratio(t["hit_bytes"], t["hit_bytes"] + t["miss_bytes"]));
  for (const char* k : {"hit_samples", "miss_samples", "hit_bytes", "miss_bytes", "backing_read_bytes", "tier_read_bytes",
                        "tier_write_bytes", "fills", "evictions"})
    p.count(k, t[k]);
  p.number("fill_seconds", static_cast<double>(t["fill_ns"]) * 1e-9);
  p.count("misses_while_filled_elsewhere", t["busy"]);
  p.count("misses_not_admitted", t["not_admitted"]);
  page_cache(p.sub("backing_page_cache"), t.backing);
  page_cache(p.sub("tier_page_cache"), t.tier);
}

void bottleneck(const Part& p, const PhaseTotals& t) {
  const RebuiltBottleneck b = rebuild_bottleneck(t);
  p.text("verdict", b.verdict, true);
  const Part e = p.sub("evidence");
  e.number("batch_wait_share", b.batch_wait_share);
  e.number("compute_share", b.compute_share);
  e.number("barrier_share", b.barrier_share);
  e.text("page_cache", b.cache);
  auto known = [&](double v) { return b.readers ? std::optional<double>(v) : std::nullopt; };
  e.number("reader_threads", known(static_cast<double>(b.reader_threads)), kExact);
  e.number("max_reads_in_flight", known(static_cast<double>(b.max_in_flight)), kExact);
  e.number("reader_busy_seconds", known(b.reader_busy));
  e.number("reader_cpu_seconds", known(b.reader_cpu));
  e.number("reader_run_delay_seconds", b.reader_run_delay);
  e.number("reader_busy_share", b.reader_busy_share);
  e.number("reader_cpu_share", b.reader_cpu_share);
  e.number("reader_cpu_and_run_delay_per_busy_second", b.reader_cpu_and_run_delay_per_busy);
  e.number("storage_wait_share", b.storage_wait_share);
  e.number("at_max_in_flight_share", b.at_max_share);
  e.number("host_cpu_idle_share", b.host_idle);
  e.number("cpu_seconds", b.cpu);
  e.number("cpu_polling_seconds", b.cpu_polling);
  e.entries("read_latency_by_depth", b.bands.size());
  for (std::size_t i = 0; i < b.bands.size(); ++i) {
    const Part band = e.sub(fmt::format("read_latency_by_depth/{}", i));
    band.count("depth_from", b.bands[i].depth_from);
    band.count("calls", b.bands[i].calls);
    band.number("mean_seconds", b.bands[i].mean_seconds);
  }
  if (!b.cpu_burner.empty()) e.text("cpu_burned_by", b.cpu_burner);
}

void phase(const Part& p, const PhaseTotals& t, int ranks, const std::vector<std::string>& hostnames) {
  const auto au = t.au();
  p.count("steps_per_rank", t.steps());
  p.number("duration_seconds", t.duration());
  p.number("au_percentage", scaled(au, 100));
  p.number("au_min_rank_percentage", au ? std::optional<double>(t.au_min() * 100) : std::nullopt);
  p.number("au_max_rank_percentage", au ? std::optional<double>(t.au_max() * 100) : std::nullopt);
  p.number("throughput_samples_per_second", t.throughput());
  p.number("dlio_throughput_samples_per_second", t.throughput_dlio());
  p.flag("too_few_steps_to_exclude", t.degenerate());
  p.count("samples", t.samples);
  p.count("sample_bytes", t.sample_bytes);
  p.count("bytes_read", t.bytes_read());
  const double duration = t.duration();
  p.number("read_bytes_per_second", duration > 0 ? static_cast<double>(t.bytes_read()) / duration : 0.0);
  p.number("storage_read_bytes", t.process_read_known == ranks ? std::optional<double>(t.process_read_bytes) : std::nullopt, kExact);
  p.number("device_read_bytes", t.device_read_known > 0 ? std::optional<double>(t.device_read_bytes) : std::nullopt, kExact);
  p.flag("served_from_page_cache", cache_verdict(t.io.page_cache).verdict == "page_cache");
  page_cache(p.sub("page_cache"), t.io.page_cache);
  latency(p.sub("batch_wait_seconds"), t.wait);
  latency(p.sub("compute_seconds"), t.compute);
  latency(p.sub("barrier_seconds"), t.barrier);
  latency(p.sub("sample_read_seconds"), t.sample_read);
  const double per_rank = 1e-9 / std::max(1, ranks);
  p.number("step_seconds_per_rank/batch_wait", static_cast<double>(t.wait.sum()) * per_rank);
  p.number("step_seconds_per_rank/compute", static_cast<double>(t.compute.sum()) * per_rank);
  p.number("step_seconds_per_rank/barrier", static_cast<double>(t.barrier.sum()) * per_rank);
  io(p.sub("io"), t.io);
  characterization(p.sub("characterization"), t.io);
  const Part s = p.sub("stragglers");
  s.count("slowest_rank", static_cast<std::uint64_t>(t.slowest().rank));
  s.number("slowest_rank_seconds", t.slowest().own());
  s.count("fastest_rank", static_cast<std::uint64_t>(t.fastest().rank));
  s.number("fastest_rank_seconds", t.fastest().own());
  const StragglerFigures st = straggler_of(t.ranks);
  if (!st.known) {
    const JsonValue reported = s.at("straggler");
    if (reported.valid() && !reported.is_null()) s.problem("straggler: a value for a phase of one rank");
  } else {
    const Part g = s.sub("straggler");
    g.count("rank", static_cast<std::uint64_t>(st.rank));
    g.text("host", static_cast<std::size_t>(st.host) < hostnames.size() ? hostnames[static_cast<std::size_t>(st.host)] : "?");
    g.flag("held_others", st.held_others);
    g.number("batch_wait_seconds", st.batch_wait);
    g.number("others_batch_wait_seconds", st.others_batch_wait);
    g.number("others_barrier_seconds", st.others_barrier);
  }
  s.number("first_done_read_bytes_per_second", t.first_done_bandwidth());
  s.number("last_done_read_bytes_per_second", t.last_done_bandwidth());
  std::vector<std::array<double, 4>> hosts(hostnames.size());  // ranks, slowest, samples, bytes
  for (const auto& r : t.ranks) {
    auto& h = hosts[static_cast<std::size_t>(r.host)];
    h[0] += 1;
    h[1] = std::max(h[1], r.duration);
    h[2] += static_cast<double>(r.samples);
    h[3] += static_cast<double>(r.bytes_read);
  }
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    const Part host = s.sub(fmt::format("hosts/{}", h));
    host.text("host", hostnames[h]);
    host.count("ranks", static_cast<std::uint64_t>(hosts[h][0]));
    host.number("slowest_rank_seconds", hosts[h][1]);
    host.count("samples", static_cast<std::uint64_t>(hosts[h][2]));
    host.count("bytes_read", static_cast<std::uint64_t>(hosts[h][3]));
    host.number("read_bytes_per_second", hosts[h][1] > 0 ? hosts[h][3] / hosts[h][1] : 0.0);
  }
  const Part c = p.sub("client_cost");
  const double cpu = t.cpu_user() + t.cpu_sys();
  const double gib = static_cast<double>(t.bytes_read()) / util::kGiB;
  c.number("cpu_user_seconds", t.cpu_user());
  c.number("cpu_sys_seconds", t.cpu_sys());
  c.number("cpu_polling_seconds", t.cpu_polling());
  c.number("cpu_seconds_per_GiB_read", gib > 0 ? std::max(0.0, cpu - t.cpu_polling()) / gib : 0.0);
  c.number("cpu_cores_busy", duration > 0 ? cpu / duration : 0.0);
  bottleneck(p.sub("bottleneck"), t);
  if (t.io.requests.total.count() > 0) requests(p.sub("requests"), t.io.requests);
  if (t.tier["hit_samples"] + t.tier["miss_samples"] > 0) tier(p.sub("cache"), t.tier);
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double stdev(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const double m = mean(v);
  double acc = 0;
  for (double x : v) acc += (x - m) * (x - m);
  return std::sqrt(acc / static_cast<double>(v.size()));
}

// DLIO's metric block of one phase kind over the epochs that have one (their AU in percent and
// throughput, in epoch order).
void dlio_metric(const Part& m, const std::string& prefix, const std::vector<std::optional<double>>& epoch_au,
                 const std::vector<std::optional<double>>& epoch_throughput, double nominal, double target) {
  std::vector<double> au, thr;
  for (std::size_t i = 0; i < epoch_au.size(); ++i) {
    const auto a = epoch_au[i];
    const auto t = epoch_throughput[i];
    m.number(fmt::format("{}_au_percentage/{}", prefix, i), a, kRounding, true);
    m.number(fmt::format("{}_throughput_samples_per_second/{}", prefix, i), t, kRounding, true);
    if (a) au.push_back(*a);
    if (t) thr.push_back(*t);
  }
  const auto some = [](const std::vector<double>& v, double x) { return v.empty() ? std::nullopt : std::optional<double>(x); };
  m.number(prefix + "_au_mean_percentage", some(au, mean(au)), kRounding, true);
  m.number(prefix + "_au_stdev_percentage", some(au, stdev(au)), {1e-9, 1e-9}, true);
  m.number(prefix + "_throughput_mean_samples_per_second", some(thr, mean(thr)), kRounding, true);
  m.number(prefix + "_throughput_stdev_samples_per_second", some(thr, stdev(thr)), {1e-9, 1e-9}, true);
  m.number(prefix + "_io_mean_MB_per_second", some(thr, mean(thr) * nominal / util::kMiB), kRounding, true);
  m.number(prefix + "_io_stdev_MB_per_second", some(thr, stdev(thr) * nominal / util::kMiB), {1e-9, 1e-9}, true);
  // The verdict: a result validated by its AU (training needs a throughput to validate too).
  if (!au.empty() && (prefix == "eval" || !thr.empty()))
    m.text(prefix + "_au_meet_expectation", mean(au) >= target ? "success" : "fail", true);
  else
    m.number(prefix + "_au_meet_expectation", std::nullopt, kExact, true);  // no verdict: null
}

// trainio.startup: the earliest rank's process start, each rank's time from it to its first read
// of checkpoint data (the end line's process_start_ns, the first load's first_read_end_ns), and the
// failover gap from the write job's end (the failover line) to that start.
void startup(const Part& p, const RunTotals& totals) {
  const StartupTotals& s = totals.startup;
  const bool known = s.ranks_known == totals.ranks && totals.ranks > 0;
  if (known) p.text("process_start", s.first_process_start);
  else p.number("process_start", std::nullopt);
  const Part read = p.sub("first_checkpoint_read_seconds");
  if (known && s.ranks_loaded > 0) {
    read.number("max", s.first_read_max, kExact, true);
    read.number("min", s.first_read_min, kExact);
    read.count("slowest_rank", static_cast<std::uint64_t>(s.first_read_slowest_rank));
    read.count("ranks", static_cast<std::uint64_t>(s.ranks_loaded));
  } else if (read.exists() && !read.at("").is_null()) {
    read.problem("reported, but no rank's records give a process start and a first read in a load");
  }
  const Part f = p.sub("failover");
  if (!s.failover) {
    if (f.exists() && !f.at("").is_null()) f.problem("reported, but the records name no run this one resumed from");
    return;
  }
  f.text("previous_results", s.failover->previous_results);
  f.text("previous_end", s.failover->previous_end);
  const std::optional<double> gap = known ? iso_span(s.failover->previous_end, s.first_process_start) : std::nullopt;
  // Both ends are wall times to the microsecond.
  f.number("gap_seconds", gap, {0, 2e-6}, true);
  if (gap) f.flag("within_limit", *gap <= 30);
}

}  // namespace

void check_summary_epoch(const JsonValue& entry, std::size_t index, const RunTotals& totals, Checks& checks) {
  for (const auto& [key, p] : totals.phases) {
    if (key.second != "train") continue;
    const Part e(entry, fmt::format("trainio/epochs/{}", index), checks);
    e.count("epoch", p.epoch);
    phase(e.sub("train"), p, totals.ranks, totals.hostnames);
    const auto ev = totals.phases.find({p.epoch, "eval"});
    if (ev != totals.phases.end()) phase(e.sub("eval"), ev->second, totals.ranks, totals.hostnames);
    else if (e.sub("eval").exists()) e.sub("eval").problem("an evaluation the records do not hold");
    return;
  }
}

void EpochSums::add(const PhaseTotals& p) {
  ++phases;
  rank_phases += p.ranks.size();
  all.merge(p.io);
  const auto au = p.au();
  if (p.kind == "eval") {
    eval_au.push_back(au ? std::optional<double>(*au * 100) : std::nullopt);
    eval_throughput.push_back(p.throughput_dlio());
    return;
  }
  ++train_phases;
  train_au.push_back(au ? std::optional<double>(*au * 100) : std::nullopt);
  train_throughput.push_back(p.throughput_dlio());
  exact.push_back(p.throughput());
  bandwidth.push_back(p.duration() > 0 ? static_cast<double>(p.bytes_read()) / p.duration() : 0.0);
  samples += p.samples;
  cache.merge(p.io.page_cache);
  sample_read.merge(p.sample_read);
  wait.merge(p.wait);
  steps += static_cast<double>(p.steps());
  compute += static_cast<double>(p.compute.sum()) * 1e-9;
  bytes += static_cast<double>(p.bytes_read());
  cpu += p.cpu_user() + p.cpu_sys();
  polling += p.cpu_polling();
  duration += p.duration();
  idle += static_cast<double>(p.host_idle);
  ticks += static_cast<double>(p.host_total);
}

void check_summary(const std::string&, const JsonValue& summary, const RunTotals& totals, Checks& checks) {
  const Part top(summary, "", checks);
  const Part m = top.sub("metric");
  const EpochSums& sums = totals.epochs;
  // A run a signal stopped says so, as every rank's records do.
  top.flag("trainio/complete", totals.incomplete_ranks == 0);
  const JsonValue nominal = find(summary, "trainio/plan/nominal_record_bytes");
  const JsonValue target = find(summary, "trainio/train/au_target_percentage");
  if (totals.summary_epochs != sums.train_phases)
    top.sub("trainio/epochs").problem(fmt::format("{} epochs in the summary, {} in the records", totals.summary_epochs, sums.train_phases));
  if (sums.train_phases > 0 && nominal.valid() && nominal.is_number() && target.valid() && target.is_number()) {
    dlio_metric(m, "train", sums.train_au, sums.train_throughput, nominal.f64(), target.f64());
    if (!sums.eval_au.empty()) dlio_metric(m, "eval", sums.eval_au, sums.eval_throughput, nominal.f64(), target.f64());
    // trainio's training figures over the run.
    const Part t = top.sub("trainio/train");
    t.number("throughput_mean_samples_per_second", mean(sums.exact), kRounding, true);
    t.number("throughput_stdev_samples_per_second", stdev(sums.exact), {1e-9, 1e-9});
    t.number("read_bytes_per_second_mean", mean(sums.bandwidth), kRounding, true);
    t.count("samples", sums.samples, true);
    page_cache(t.sub("page_cache"), sums.cache);
    latency(t.sub("sample_read_seconds"), sums.sample_read);
    latency(t.sub("batch_wait_seconds"), sums.wait);
  }
  // Checkpoints: each one, DLIO's figures over them, trainio's totals.
  const JsonValue listed_checkpoints = find(summary, "trainio/checkpoint/checkpoints");
  const std::size_t checkpoints = listed_checkpoints.valid() && listed_checkpoints.is_array() ? listed_checkpoints.size() : 0;
  if (checkpoints != totals.checkpoints.size())
    top.sub("trainio/checkpoint/checkpoints")
        .problem(fmt::format("{} checkpoints in the summary, {} in the records", checkpoints, totals.checkpoints.size()));
  std::map<std::string, std::vector<const CheckpointTotals*>> by_kind;
  for (std::size_t i = 0; i < checkpoints; ++i) {
    const JsonValue c = listed_checkpoints.at(i);
    const JsonValue kind = c.is_object() ? c.find("kind") : JsonValue(), index = c.is_object() ? c.find("index") : JsonValue();
    const auto it = totals.checkpoints.find({kind.valid() && kind.is_string() ? kind.str() : std::string(),
                                             index.valid() && index.is_unsigned() ? index.u64() : 0});
    const Part p = top.sub(fmt::format("trainio/checkpoint/checkpoints/{}", i));
    if (it == totals.checkpoints.end()) {
      p.problem("a checkpoint the records do not hold");
      continue;
    }
    const CheckpointTotals& k = it->second;
    by_kind[k.kind].push_back(&k);
    p.count("epoch", k.epoch);
    p.count("step", k.step);
    p.text("folder", k.folder);
    p.number("duration_seconds", k.duration, kExact);
    p.number("fastest_rank_seconds", k.ranks_with_data > 0 ? k.fastest : 0.0, kExact);
    p.number("collective_seconds", k.collective, kExact);
    p.count("files", k.files);
    p.count("tensor_bytes", k.tensor_bytes);
    p.count("file_bytes", k.file_bytes);
    p.number("bytes_per_second", k.duration > 0 ? static_cast<double>(k.file_bytes) / k.duration : 0.0);
    p.number("rank_bytes_per_second_min", k.ranks_with_data > 0 ? k.rank_bandwidth_min : 0.0);
    p.number("rank_bytes_per_second_max", k.rank_bandwidth_max);
    p.count("ranks_with_data", static_cast<std::uint64_t>(k.ranks_with_data));
    p.count("slowest_rank", static_cast<std::uint64_t>(std::max(0, k.slowest_rank)));
    p.number("slowest_rank_seconds", k.slowest_rank_seconds, kExact);
    p.count("slowest_rank_file_bytes", k.slowest_rank_file_bytes);
    p.number("slowest_rank_bytes_per_second", k.duration > 0 ? static_cast<double>(k.slowest_rank_file_bytes) / k.duration : 0.0);
    if (k.kind == "load") {
      p.number("storage_read_bytes", k.read_known == k.ranks ? std::optional<double>(k.storage_read_bytes) : std::nullopt, kExact);
      page_cache(p.sub("page_cache"), k.io.page_cache);
    }
    io(p.sub("io"), k.io);
    characterization(p.sub("characterization"), k.io);
    if (k.io.requests.total.count() > 0) requests(p.sub("requests"), k.io.requests);
  }
  if (const JsonValue size = find(summary, "metric/checkpoint_size_GB"); size.valid() && !by_kind.empty()) {
    const double gib = size.is_number() ? size.f64() : 0;  // another value: the check of it below says so
    for (const auto& [kind, list] : by_kind) {
      std::vector<double> rate, seconds;
      std::uint64_t bytes = 0;
      double total = 0, low = 1e300, high = 0;
      for (const CheckpointTotals* k : list) {
        seconds.push_back(k->duration);
        rate.push_back(k->duration > 0 ? gib / k->duration : 0);
        bytes += k->file_bytes;
        total += k->duration;
        const double bw = k->duration > 0 ? static_cast<double>(k->file_bytes) / k->duration : 0.0;
        low = std::min(low, bw);
        high = std::max(high, bw);
      }
      m.number(kind + "_checkpoint_io_mean_GB_per_second", mean(rate), kRounding, true);
      m.number(kind + "_checkpoint_io_stdev_GB_per_second", stdev(rate), {1e-9, 1e-9});
      m.number(kind + "_checkpoint_duration_mean_seconds", mean(seconds), kRounding, true);
      m.number(kind + "_checkpoint_duration_stdev_seconds", stdev(seconds), {1e-9, 1e-9});
      const Part t = top.sub(fmt::format("trainio/checkpoint/{}s", kind));
      t.count("count", list.size());
      t.count("file_bytes", bytes);
      t.number("duration_seconds", total);
      t.number("bytes_per_second", total > 0 ? static_cast<double>(bytes) / total : 0.0, kRounding, true);
      t.number("bytes_per_second_min", low);
      t.number("bytes_per_second_max", high);
    }
    // The checkpoint's size is every rank's tensor bytes of one save.
    for (const CheckpointTotals* k : by_kind["save"]) {
      m.number("checkpoint_size_GB", static_cast<double>(k->tensor_bytes) / util::kGiB, kRounding, true);
      break;
    }
  }
  // Generation.
  if (totals.generate.ran) {
    const Part g = top.sub("trainio/generate");
    const auto& t = totals.generate;
    const auto bytes = static_cast<double>(t.io.bytes_written());
    g.number("duration_seconds", t.durable_seconds, kExact, true);
    g.count("files_written", t.files_written, true);
    g.count("files_kept", t.files_kept);
    g.count("bytes_written", t.io.bytes_written(), true);
    g.number("write_seconds", t.seconds, kExact, true);
    g.number("write_bytes_per_second", t.seconds > 0 ? bytes / t.seconds : 0.0, kRounding, true);
    g.number("durable_seconds", t.durable_seconds, kExact, true);
    g.number("durable_bytes_per_second", t.durable_seconds > 0 ? bytes / t.durable_seconds : 0.0, kRounding, true);
    io(g.sub("io"), t.io);
    characterization(g.sub("characterization"), t.io);
    if (t.io.requests.total.count() > 0) requests(g.sub("requests"), t.io.requests);
  }
  startup(top.sub("trainio/startup"), totals);
  // The whole run's characterization: every phase's calls together.
  Io all = totals.generate.io;
  all.merge(totals.staging_io);
  all.merge(sums.all);
  for (const auto& [key, c] : totals.checkpoints) all.merge(c.io);
  characterization(top.sub("trainio/characterization"), all);
}

}  // namespace trainio::verify
