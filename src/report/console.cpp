#include "report/console.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "metrics/bottleneck.hpp"
#include "metrics/client_capacity.hpp"
#include "report/dlio_figures.hpp"
#include "storage/s3/s3_endpoint.hpp"
#include "util/error.hpp"
#include "util/redact.hpp"
#include "util/stop_request.hpp"
#include "util/units.hpp"

namespace trainio::report {

namespace {

std::string latency_row(const char* label, const metrics::Histogram& h) {
  auto d = [](std::uint64_t ns) { return util::format_duration(static_cast<double>(ns) * 1e-9); };
  if (h.count() == 0) return fmt::format("  {:<22} -\n", label);
  return fmt::format("  {:<22} p50 {}  p90 {}  p99 {}  max {}\n", label, d(h.quantile(0.5)), d(h.quantile(0.9)),
                     d(h.quantile(0.99)), d(h.max()));
}

// A figure that may have no value: "-" then.
std::string maybe(const std::optional<double>& v, const char* format, double scale = 1) {
  return v ? fmt::format(fmt::runtime(format), *v * scale) : std::string("-");
}

// A phase's page-cache verdict in words (docs/storage.md).
std::string page_cache_text(const metrics::PageCacheStats& c) {
  const metrics::PageCacheVerdict v = metrics::page_cache_verdict(c);
  const std::string evidence =
      v.resident_fraction ? fmt::format("{:.0f}% resident before the reads; {}, {} probe{}", *v.resident_fraction * 100,
                                        v.method, c.probes, c.probes == 1 ? "" : "s")
                          : std::string();
  switch (v.verdict) {
    case metrics::CacheVerdict::page_cache: return "served by the page cache (" + evidence + ")";
    case metrics::CacheVerdict::storage: return "served by storage (" + evidence + ")";
    case metrics::CacheVerdict::mixed: return "partly page cache, partly storage (" + evidence + ")";
    case metrics::CacheVerdict::bypassed:
      return v.method == "object_store" ? "bypassed (object store)" : v.method == "o_direct" ? "bypassed (O_DIRECT)"
                                                                                              : "bypassed (object store, O_DIRECT)";
    case metrics::CacheVerdict::unknown: break;
  }
  return "unknown: " + v.reason;
}

double hit_percent(const metrics::TierStats& t) {
  const std::uint64_t all = t.hit_bytes + t.miss_bytes;
  return all > 0 ? 100.0 * static_cast<double>(t.hit_bytes) / static_cast<double>(all) : 0.0;
}

// The cache tier over the run: what it served, what still came from storage, staging, and the
// randomness a cache-aware order gave up.
std::string tier_lines(const config::Workload& w, const metrics::RunSummary& run) {
  metrics::TierStats all, later;
  for (const auto& e : run.epochs) {
    all.merge(e.train.tier);
    if (e.epoch > 1) later.merge(e.train.tier);
  }
  std::string out = fmt::format("  {:<22} {} {}/node, {}: hits {:.1f}% of sample bytes", "cache tier",
                                config::to_string(w.cache.tier), util::format_bytes(static_cast<double>(w.cache.capacity)),
                                config::to_string(w.cache.policy), hit_percent(all));
  if (run.epochs.size() > 1) out += fmt::format(" ({:.1f}% after epoch 1)", hit_percent(later));
  out += fmt::format("; {} from storage, {} from the tier, {} evictions\n",
                     util::format_bytes(static_cast<double>(all.backing_read_bytes)),
                     util::format_bytes(static_cast<double>(all.tier_read_bytes)), all.evictions);
  if (w.cache.staging == config::CacheStaging::before_first_epoch)
    out += fmt::format("  {:<22} {} files, {} in {} ({})\n", "cache staging", run.staging.fills,
                       util::format_bytes(static_cast<double>(run.staging.tier_write_bytes)),
                       util::format_duration(run.staging_seconds),
                       util::format_rate(run.staging_seconds > 0 ? static_cast<double>(run.staging.tier_write_bytes) / run.staging_seconds : 0));
  if (all.order_pairs > 0)
    out += fmt::format("  {:<22} Kendall tau distance {:.4f} from the uniform shuffle; {:.1f}% of samples moved\n",
                       "cache-aware order", static_cast<double>(all.order_inversions) / static_cast<double>(all.order_pairs),
                       100.0 * static_cast<double>(all.order_moved) / static_cast<double>(all.ordered_samples));
  return out;
}

std::string ms(std::uint64_t ns) { return util::format_duration(static_cast<double>(ns) * 1e-9); }

// Every endpoint's share of the run's requests, named as the workload lists them.
std::string endpoint_lines(const config::Workload& w, const metrics::RequestStats& r) {
  if (r.by_endpoint.size() < 2) return "";
  std::vector<std::string> urls;
  try {
    urls = storage::s3::endpoint_urls(w.storage.storage_options.endpoint_url);
  } catch (const Error&) {  // given by AWS_ENDPOINT_URL instead
  }
  std::string out;
  for (std::size_t i = 0; i < r.by_endpoint.size(); ++i) {
    const auto& e = r.by_endpoint[i];
    out += fmt::format("  {:<22} {}: {} requests, {}, first byte p50 {} p99 {}, {} retries\n", i == 0 ? "S3 endpoints" : "",
                       i < urls.size() ? util::redact(urls[i]) : fmt::format("endpoint {}", i), e.count,
                       util::format_bytes(static_cast<double>(e.bytes)), ms(e.first_byte_ns.quantile(0.5)),
                       ms(e.first_byte_ns.quantile(0.99)), e.retries);
  }
  return out;
}

}  // namespace

std::string s3_figures(const metrics::RequestStats& r, double seconds) {
  if (r.requests() == 0) return "";
  std::string statuses;
  for (std::size_t s = 0; s < r.by_status.size(); ++s)
    if (r.by_status[s] > 0)
      statuses += fmt::format("{}{} x{}", statuses.empty() ? "" : ", ", s == 0 ? std::string("no answer") : std::to_string(s),
                              r.by_status[s]);
  std::string retried;
  for (std::size_t s = 0; s < r.retries_by_status.size(); ++s)
    if (r.retries_by_status[s] > 0)
      retried += fmt::format("{}{} x{}", retried.empty() ? " after " : ", ", s == 0 ? std::string("no answer") : std::to_string(s),
                             r.retries_by_status[s]);
  return fmt::format("S3 {} requests ({}/s), first byte p50 {} p99 {}, {} retries{}, HTTP {}", r.requests(),
                     seconds > 0 ? fmt::format("{:.1f}", static_cast<double>(r.requests()) / seconds) : std::string("-"),
                     ms(r.first_byte_ns.quantile(0.5)), ms(r.first_byte_ns.quantile(0.99)), r.retries, retried, statuses);
}

std::string epoch_line(const metrics::EpochSummary& e, std::uint64_t epochs, double nominal_record_bytes) {
  const auto& t = e.train;
  const std::optional<double> nominal =
      t.throughput_dlio ? std::optional<double>(*t.throughput_dlio * nominal_record_bytes) : std::nullopt;
  std::string line = fmt::format("epoch {}/{}: {} steps in {}  AU {}%  {} samples/s  {} (read {})", e.epoch, epochs,
                                 t.steps, util::format_duration(t.duration), maybe(t.au, "{:.1f}", 100),
                                 maybe(t.throughput_dlio, "{:.1f}"), nominal ? util::format_rate(*nominal) : "-",
                                 util::format_rate(t.read_bandwidth));
  if (t.tiered)
    line += fmt::format("  cache hits {:.1f}%, {} from storage", hit_percent(t.tier),
                        util::format_bytes(static_cast<double>(t.tier.backing_read_bytes)));
  if (e.evaluated)
    line += fmt::format("; eval {} steps, AU {}%, {} samples/s", e.eval.steps, maybe(e.eval.au, "{:.1f}", 100),
                        maybe(e.eval.throughput_dlio, "{:.1f}"));
  // What limited each phase (docs/metrics.md, "The bottleneck verdict"), kept short: a stopping
  // run's output must fit what its launcher still reads; the reasons are in summary.json and the
  // final table.
  line += fmt::format("  bottleneck: {}", metrics::decide_bottleneck(metrics::bottleneck_evidence(t)).verdict);
  if (e.evaluated) line += fmt::format(", eval {}", metrics::decide_bottleneck(metrics::bottleneck_evidence(e.eval)).verdict);
  if (t.io.requests().requests() > 0) line += "\n  train: " + s3_figures(t.io.requests(), t.duration);
  if (e.evaluated && e.eval.io.requests().requests() > 0)
    line += "\n  eval: " + s3_figures(e.eval.io.requests(), e.eval.duration);
  return line;
}

std::string startup_line(const metrics::StartupSummary& s, const std::optional<Failover>& failover) {
  std::vector<std::string> parts;
  if (s.ranks_loaded > 0)
    parts.push_back(fmt::format("process start to first checkpoint read: {:.3f} s (slowest rank {}; fastest {:.3f} s)",
                                s.first_read_max, s.first_read_slowest_rank, s.first_read_min));
  if (failover) {
    if (const auto gap = failover_gap(*failover, s))
      parts.push_back(fmt::format("failover: started {:.1f} s after the write job ended ({}; MLPerf allows {:.0f} s)", *gap,
                                  *gap <= kFailoverLimitSeconds ? "within" : "BEYOND", kFailoverLimitSeconds));
    else
      parts.push_back("failover gap unknown: a rank's process start could not be read");
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string checkpoint_line(const metrics::CheckpointSummary& c, std::uint64_t of) {
  const bool save = c.kind == metrics::CheckpointRecord::Kind::save;
  std::string line = fmt::format("checkpoint {} {}{} ({}): {} in {}, {}", save ? "save" : "load", c.index,
                                 of ? fmt::format("/{}", of) : std::string(), c.folder,
                                 util::format_bytes(static_cast<double>(c.file_bytes)), util::format_duration(c.duration),
                                 util::format_rate(c.bandwidth));
  if (c.ranks_with_data > 1)
    line += fmt::format(" (per rank {} to {})", util::format_rate(c.rank_bandwidth_min), util::format_rate(c.rank_bandwidth_max));
  if (c.io.requests().requests() > 0) line += "\n  " + s3_figures(c.io.requests(), c.duration);
  return line;
}

std::string generation_line(const metrics::GenerateSummary& g) {
  return fmt::format("{} files written, {} kept, {} written in {} ({}), durable after {} ({})",
                     util::format_count(g.files_written), util::format_count(g.files_kept),
                     util::format_bytes(static_cast<double>(g.bytes_written)), util::format_duration(g.seconds),
                     util::format_rate(g.write_bandwidth), util::format_duration(g.durable_seconds),
                     util::format_rate(g.durable_bandwidth));
}

std::string final_table(const config::Workload& w, const plan::DatasetLayout& layout, const metrics::RunSummary& run,
                        const std::string& summary_path, const std::vector<std::string>& hostnames) {
  std::string out;
  out += fmt::format("\n{} - {} rank{} on {} host{}\n", w.name, run.ranks, run.ranks == 1 ? "" : "s", run.hosts,
                     run.hosts == 1 ? "" : "s");
  if (run.generate.ran) out += fmt::format("  {:<22} {}\n", "generation", generation_line(run.generate));
  if (run.generate.ran && run.generate.io.requests().requests() > 0)
    out += fmt::format("  {:<22} {}\n", "", s3_figures(run.generate.io.requests(), run.generate.seconds));
  if (!run.epochs.empty()) {
    std::vector<double> bw, exact;
    bool degenerate = false;
    for (const auto& e : run.epochs) {
      exact.push_back(e.train.throughput);
      bw.push_back(e.train.read_bandwidth);
      degenerate = degenerate || e.train.degenerate;
    }
    // DLIO's figures, and MLPerf's verdict only where there is a result to judge.
    const DlioFigures f = dlio_figures(run, "train", layout.nominal_record_bytes(), w);
    if (f.au_mean && f.au_meets)
      out += fmt::format("  {:<22} {:.2f}% (stdev {:.2f})   {} (needs >= {:.0f}%)\n", "accelerator util. (AU)", *f.au_mean,
                         *f.au_stdev, *f.au_meets ? "PASS" : "FAIL", w.metric.au * 100);
    else
      out += fmt::format("  {:<22} {}   no verdict: {}\n", "accelerator util. (AU)",
                         f.au_mean ? fmt::format("{:.2f}% (stdev {:.2f})", *f.au_mean, *f.au_stdev) : std::string("-"),
                         f.verdict_cause);
    // Beside AU: how many accelerators this client could feed before it, not the storage, limits.
    const metrics::ClientCapacity cap = metrics::client_capacity(metrics::capacity_inputs(run, run.client_cores, w.metric.au));
    out += fmt::format("  {:<22} {}\n", "client capacity",
                       cap.accelerators ? fmt::format("{} accelerators at AU {:.0f}% ({})", *cap.accelerators, w.metric.au * 100, cap.reason)
                                        : fmt::format("unknown: {}", cap.reason));
    out += fmt::format("  {:<22} {}; exact window: {:.2f}\n", "throughput (DLIO)",
                       f.throughput_mean ? fmt::format("{:.2f} samples/s (stdev {:.2f})", *f.throughput_mean, *f.throughput_stdev)
                                         : std::string("- (no value, see trainio.notes in summary.json)"),
                       metrics::mean_of(exact));
    out += fmt::format("  {:<22} {} nominal (DLIO's MB/s); {} measured reads\n", "I/O",
                       f.throughput_mean ? util::format_rate(*f.throughput_mean * layout.nominal_record_bytes()) : "-",
                       util::format_rate(metrics::mean_of(bw)));
    out += latency_row("sample read", run.train_sample_ns);
    out += latency_row("batch wait", run.train_wait_ns);
    // Where the steps' time went: waiting for data, computing, waiting for the other ranks.
    const double wait = run.train_wait_ns.sum(), compute = run.train_compute_ns.sum(), barrier = run.train_barrier_ns.sum();
    const double step_total = wait + compute + barrier;
    if (step_total > 0)
      out += fmt::format("  {:<22} batch wait {:.1f}%, compute {:.1f}%, barrier {:.1f}%\n", "step time",
                         100 * wait / step_total, 100 * compute / step_total, 100 * barrier / step_total);
    // The straggler over the run (the epoch whose others waited longest for one rank at the
    // barrier), and what reading cost the clients' CPUs.
    const metrics::PhaseSummary* worst = nullptr;
    double cpu = 0, polling = 0, bytes = 0, seconds = 0;
    for (const auto& e : run.epochs) {
      const auto& st = e.train.straggler;
      if (st.known && st.held_others && (!worst || st.others_barrier > worst->straggler.others_barrier)) worst = &e.train;
      cpu += e.train.cpu_user + e.train.cpu_sys;
      polling += e.train.cpu_polling;
      bytes += static_cast<double>(e.train.bytes_read);
      seconds += e.train.duration;
    }
    if (worst) {
      const auto& st = worst->straggler;
      const auto h = static_cast<std::size_t>(st.host);
      out += fmt::format("  straggler: rank {} (host {}) waited {} for its batches, the others {}; they waited {} for it at the barrier\n",
                         st.rank, h < hostnames.size() ? hostnames[h] : std::to_string(st.host), util::format_duration(st.batch_wait),
                         util::format_duration(st.others_batch_wait), util::format_duration(st.others_barrier));
    } else if (run.ranks > 1) {
      out += fmt::format("  {:<22} none: no rank's batch wait held the others at the barrier\n", "straggler");
    }
    {
      // The verdicts over the run's epochs, and the last epoch's reason.
      std::map<std::string, int> counts;
      for (const auto& e : run.epochs) ++counts[metrics::decide_bottleneck(metrics::bottleneck_evidence(e.train)).verdict];
      const metrics::BottleneckVerdict last = metrics::decide_bottleneck(metrics::bottleneck_evidence(run.epochs.back().train));
      std::string tally;
      for (const auto& [verdict, n] : counts) tally += fmt::format("{}{} in {} of {} epochs", tally.empty() ? "" : ", ", verdict, n, run.epochs.size());
      out += fmt::format("  {:<22} {}; epoch {}: {}: {}\n", "bottleneck", tally, run.epochs.back().epoch, last.verdict, last.reason);
    }
    if (bytes > 0 && seconds > 0)
      out += fmt::format("  {:<22} {:.2f} CPU-seconds per GiB read; {:.2f} cores busy on average{}\n", "client CPU",
                         std::max(0.0, cpu - polling) / (bytes / (1024.0 * 1024.0 * 1024.0)), cpu / seconds,
                         polling > 0 ? fmt::format(", {:.2f} of them polling for batches", polling / seconds) : "");
    if (w.cache.tier != config::CacheTier::none) out += tier_lines(w, run);
    std::size_t cached = 0;
    for (const auto& e : run.epochs) cached += metrics::served_from_cache(e.train) ? 1 : 0;
    if (cached > 0)
      out += fmt::format("  caching: {} of {} epochs were served from the page cache, not the storage "
                         "(set reader.evict, or a dataset larger than memory)\n",
                         cached, run.epochs.size());
    if (degenerate)
      out += "  note: some blocks of steps had no more steps than output.metric.exclude_*_steps: they have no AU or "
             "DLIO throughput (see trainio.notes in summary.json)\n";
    const DlioFigures ef = dlio_figures(run, "eval", layout.nominal_record_bytes(), w);
    if (!ef.au.empty())
      out += fmt::format("  {:<22} AU {}%, {} samples/s over {} evaluation{}\n", "evaluation", maybe(ef.au_mean, "{:.2f}"),
                         maybe(ef.throughput_mean, "{:.2f}"), ef.au.size(), ef.au.size() == 1 ? "" : "s");
  }
  for (const auto kind : {metrics::CheckpointRecord::Kind::save, metrics::CheckpointRecord::Kind::load}) {
    std::vector<double> bw, seconds;
    double bytes = 0, all_bytes = 0;
    for (const auto& c : run.checkpoints) {
      if (c.kind != kind) continue;
      bw.push_back(c.bandwidth);
      seconds.push_back(c.duration);
      bytes = static_cast<double>(c.file_bytes);
      all_bytes += bytes;
    }
    if (bw.empty()) continue;
    const bool save = kind == metrics::CheckpointRecord::Kind::save;
    out += fmt::format("  {:<22} {} (stdev {}), {} per checkpoint of {} ({} {})\n",
                       save ? "checkpoint save" : "checkpoint load", util::format_rate(metrics::mean_of(bw)),
                       util::format_rate(metrics::stdev_of(bw)), util::format_duration(metrics::mean_of(seconds)),
                       util::format_bytes(bytes), bw.size(), save ? (bw.size() == 1 ? "save" : "saves") : (bw.size() == 1 ? "load" : "loads"));
    // The mean of rates lets one fast checkpoint dominate: all bytes over all time beside it.
    const double total_seconds = std::accumulate(seconds.begin(), seconds.end(), 0.0);
    if (bw.size() > 1 && total_seconds > 0)
      out += fmt::format("  {:<22} {} (all bytes over all time; per checkpoint {} to {})\n", "",
                         util::format_rate(all_bytes / total_seconds), util::format_rate(*std::min_element(bw.begin(), bw.end())),
                         util::format_rate(*std::max_element(bw.begin(), bw.end())));
  }
  if (w.checkpoint.async) {
    double stall = 0, most = 0;
    std::size_t saves = 0;
    for (const auto& c : run.checkpoints)
      if (c.async.on) stall += c.async.stall, most = std::max(most, c.async.stall), ++saves;
    if (saves > 0)
      out += fmt::format("  {:<22} training stalled {} in all by {} asynchronous save{} (longest {}); the rates above are the flushes'\n",
                         "checkpoint stall", util::format_duration(stall), saves, saves == 1 ? "" : "s", util::format_duration(most));
  }
  {
    metrics::PageCacheStats train, eval, loads;
    for (const auto& e : run.epochs) {
      train.merge(e.train.io.page_cache());
      if (e.evaluated) eval.merge(e.eval.io.page_cache());
    }
    for (const auto& c : run.checkpoints)
      if (c.kind == metrics::CheckpointRecord::Kind::load) loads.merge(c.io.page_cache());
    std::string parts;
    auto add = [&](const char* what, const metrics::PageCacheStats& c) {
      if (c.read_bytes == 0) return;
      parts += fmt::format("{}{} {}", parts.empty() ? "" : "; ", what, page_cache_text(c));
    };
    add("train", train);
    add("eval", eval);
    add("checkpoint loads", loads);
    if (!parts.empty()) out += fmt::format("  {:<22} {}\n", "page cache", parts);
  }
  if (w.checkpoint.evict == config::Evict::none &&
      std::any_of(run.checkpoints.begin(), run.checkpoints.end(),
                  [](const auto& c) { return c.kind == metrics::CheckpointRecord::Kind::load; }))
    out += "  caching: checkpoint.evict is none: the loads may have been served from the page cache\n";
  out += endpoint_lines(w, run.io.requests());
  if (run.stop_signal != 0)
    out += fmt::format("  INCOMPLETE: {} stopped the run in epoch {} ({}); the figures are those of what ran before\n",
                       util::signal_name(run.stop_signal), run.stop_epoch, run.stop_phase);
  if (run.stopped_by_time_limit)
    out += fmt::format("  note: train.max_seconds = {} ended the run after epoch {}\n", w.train.max_seconds,
                       run.epochs.empty() ? 0 : run.epochs.back().epoch);
  out += fmt::format("  {:<22} {}\n", "results", summary_path);
  return out;
}

}  // namespace trainio::report
