#include "report/tables.hpp"

#include <fmt/format.h>

namespace trainio::report {

namespace {

double seconds(std::uint64_t ns) { return static_cast<double>(ns) * 1e-9; }

// A figure that may have no value: an empty cell then.
std::string cell(const std::optional<double>& v, double scale = 1) {
  return v ? fmt::format("{:.4f}", *v * scale) : std::string();
}

template <typename Row>
void each_phase(const metrics::RunSummary& run, Row&& row) {
  for (const auto& e : run.epochs) {
    row(e.epoch, "train", e.train);
    if (e.evaluated) row(e.epoch, "eval", e.eval);
  }
}

}  // namespace

std::string per_epoch_csv(const metrics::RunSummary& run) {
  std::string out =
      "epoch,phase,steps_per_rank,duration_seconds,au_percentage,throughput_samples_per_second,"
      "dlio_throughput_samples_per_second,samples,sample_bytes,bytes_read,read_bytes_per_second,"
      "storage_read_bytes,served_from_page_cache,page_cache,page_cache_resident_fraction,batch_wait_p50_seconds,batch_wait_p99_seconds,"
      "sample_read_p50_seconds,sample_read_p99_seconds,slowest_rank,fastest_rank,cpu_user_seconds,cpu_sys_seconds,"
      "cpu_polling_seconds\n";
  each_phase(run, [&](std::uint64_t epoch, const char* phase, const metrics::PhaseSummary& p) {
    const metrics::PageCacheVerdict cache = metrics::page_cache_verdict(p.io.page_cache());
    out += fmt::format("{},{},{},{:.6f},{},{:.4f},{},{},{},{},{:.1f},{},{},{},{},{:.9f},{:.9f},{:.9f},{:.9f},{},{},{:.3f},{:.3f},{:.3f}\n",
                       epoch, phase, p.steps, p.duration, cell(p.au, 100), p.throughput, cell(p.throughput_dlio), p.samples,
                       p.sample_bytes, p.bytes_read, p.read_bandwidth,
                       p.storage_read_known ? std::to_string(p.storage_read_bytes) : std::string(),
                       metrics::served_from_cache(p) ? 1 : 0, metrics::verdict_name(cache.verdict),
                       cache.resident_fraction ? fmt::format("{:.4f}", *cache.resident_fraction) : std::string(),
                       seconds(p.wait_ns.quantile(0.5)),
                       seconds(p.wait_ns.quantile(0.99)), seconds(p.sample_ns.quantile(0.5)),
                       seconds(p.sample_ns.quantile(0.99)), p.slowest.rank, p.fastest.rank, p.cpu_user, p.cpu_sys, p.cpu_polling);
  });
  return out;
}

PerRankCsv::PerRankCsv(const std::string& path, std::vector<std::string> hostnames)
    : file_(path, true), hostnames_(std::move(hostnames)) {
  file_.write(
      "epoch,phase,rank,host,duration_seconds,samples,bytes_read,read_bytes_per_second,"
      "throughput_samples_per_second,dlio_throughput_samples_per_second,au_percentage,cpu_user_seconds,cpu_sys_seconds,"
      "cpu_polling_seconds,batch_wait_seconds,compute_seconds,barrier_seconds\n");
}

void PerRankCsv::add(std::uint64_t epoch, const char* phase, const metrics::PhaseSummary& p) {
  for (const auto& r : p.ranks) {
    const auto h = static_cast<std::size_t>(r.host);
    const std::string host = h < hostnames_.size() ? hostnames_[h] : std::to_string(r.host);
    file_.write(fmt::format("{},{},{},{},{:.6f},{},{},{:.1f},{:.4f},{},{},{:.3f},{:.3f},{:.3f},{:.6f},{:.6f},{:.6f}\n", epoch, phase,
                            r.rank, host, r.duration, r.samples, r.bytes_read,
                            r.duration > 0 ? static_cast<double>(r.bytes_read) / r.duration : 0.0, r.throughput,
                            cell(r.throughput_dlio), cell(r.au, 100), r.cpu_user, r.cpu_sys, r.cpu_polling, r.batch_wait,
                            r.compute, r.barrier));
  }
}

void PerRankCsv::write_results(const ResultsOf&) { file_.commit(); }

}  // namespace trainio::report
