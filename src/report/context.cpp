#include "report/context.hpp"

#include <nlohmann/json.hpp>

#include "util/clock.hpp"
#include "util/proc_stats.hpp"

namespace trainio::report {

RunHosts gather_hosts(const mpi::Comm& comm) {
  const util::HostInfo mine = util::host_info();
  const nlohmann::json j = {{"hostname", mine.hostname}, {"kernel", mine.kernel}, {"machine", mine.machine},
                            {"cpu_model", mine.cpu_model},
                            {"cpu_count", mine.cpu_count}, {"memory_bytes", mine.memory_bytes},
                            {"host_index", comm.host_index()}, {"cores", util::cores_available()}};
  const auto all = comm.gather_strings(j.dump());
  RunHosts c;
  if (!comm.is_root()) {
    c.hosts = {mine};
    c.ranks_per_host = {1};
    return c;
  }
  c.hosts.resize(static_cast<size_t>(comm.num_hosts()));
  for (const auto& text : all) c.cores_per_rank.push_back(nlohmann::json::parse(text).at("cores").get<int>());
  c.ranks_per_host.assign(static_cast<size_t>(comm.num_hosts()), 0);
  for (const auto& text : all) {
    const auto r = nlohmann::json::parse(text);
    const auto h = r.at("host_index").get<size_t>();
    if (h >= c.hosts.size()) continue;
    if (c.ranks_per_host[h]++ == 0) {
      c.hosts[h].hostname = r.at("hostname").get<std::string>();
      c.hosts[h].kernel = r.at("kernel").get<std::string>();
      c.hosts[h].machine = r.at("machine").get<std::string>();
      c.hosts[h].cpu_model = r.at("cpu_model").get<std::string>();
      c.hosts[h].cpu_count = r.at("cpu_count").get<int>();
      c.hosts[h].memory_bytes = r.at("memory_bytes").get<std::uint64_t>();
    }
  }
  return c;
}

std::vector<std::string> RunHosts::hostnames() const {
  std::vector<std::string> out;
  for (const auto& h : hosts) out.push_back(h.hostname);
  return out;
}

std::optional<double> failover_gap(const Failover& f, const metrics::StartupSummary& startup) {
  if (!startup.known) return std::nullopt;
  return util::seconds_between(f.previous_end, util::wall_time_iso_of_us(startup.first_process_start_us));
}

RunContext context_of(const plan::DatasetLayout& layout, const mpi::Comm& comm, bool mpi_initialized,
                          const std::string& command_line, const std::string& output_dir, RunHosts hosts) {
  RunContext c;
  c.ranks = comm.size();
  c.mpi_library = mpi_initialized ? mpi::library_version() : "none";
  c.launcher = mpi::detect_launcher();
  c.data_folder = layout.root();
  c.data_fs_type = util::filesystem_type(layout.root());
  c.command_line = command_line;
  c.output_dir = output_dir;
  c.hosts = std::move(hosts.hosts);
  c.ranks_per_host = std::move(hosts.ranks_per_host);
  c.cores_per_rank = std::move(hosts.cores_per_rank);
  return c;
}

}  // namespace trainio::report
