#include "util/host_cpu.hpp"

#include <sched.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace trainio::util {

std::optional<HostCpu> host_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const bool known = ::sched_getaffinity(0, sizeof set, &set) == 0;
  std::ifstream in("/proc/stat");
  HostCpu h;
  bool any = false;
  for (std::string line; std::getline(in, line);) {
    // "cpuN user nice system idle iowait irq softirq steal ...": this process's CPUs only.
    if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    int cpu = -1;
    unsigned long long v[8] = {};
    fields >> cpu;
    int n = 0;
    while (n < 8 && fields >> v[n]) ++n;
    if (n < 5 || cpu < 0 || (known && (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set)))) continue;
    for (int i = 0; i < n; ++i) h.total += v[i];
    h.idle += v[3] + v[4];
    any = true;
  }
  if (!any) return std::nullopt;
  return h;
}

int current_thread_id() { return static_cast<int>(::gettid()); }

std::optional<std::int64_t> thread_run_delay_ns(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  long long on_cpu = 0, waiting = 0;
  if (!(in >> on_cpu >> waiting)) return std::nullopt;
  return static_cast<std::int64_t>(waiting);
}

}  // namespace trainio::util
