#pragma once
// DLIO's per-rank result files, so that tools written for DLIO read trainio's runs:
//   <rank>_output.json          per epoch, per step: load, proc (load + compute) and compute
//                               seconds; per block and evaluation: AU (%) and this rank's
//                               samples/s; the host's facts
//   <rank>_per_epoch_stats.json per epoch: start, end, duration (a string with 2 decimals, as
//                               DLIO writes it) of the epoch, its block and its evaluation, and
//                               every checkpoint saved or loaded (duration in seconds, throughput
//                               in GiB/s of the whole checkpoint)
// Epochs are keyed "1", "2", ...; each epoch's training is one block ("block1"): trainio keeps a
// checkpoint's time out of the block instead of splitting it. Timestamps are DLIO's: local time,
// %Y-%m-%dT%H:%M:%S.%f.

#include <string>

#include "config/workload.hpp"
#include "metrics/run_record.hpp"
#include "plan/layout.hpp"
#include "report/json_stream.hpp"

namespace trainio::report {

// This rank's facts for <rank>_output.json.
struct RankHost {
  std::string hostname;
  std::string machine;  // uname -m, for DLIO's host_processor_name
  int cpu_count = 0;
  double memory_gib = 0;
  bool potential_caching = false;
};

// Streams <rank>_output.json, reading the per-step lists from the record's step log.
void dlio_output_json(const metrics::RankRecord& record, const RankHost& host, JsonStream& out);
// `checkpoint_gib`: the whole checkpoint's size, for each checkpoint's throughput.
std::string dlio_per_epoch_stats_json(const metrics::RankRecord& record, double checkpoint_gib);

// DLIO's data_size_per_host: the host's ranks' share of the training data,
// floor(ranks_on_host x samples per file x files / ranks) x record length. DLIO's
// potential_caching for a host is 1 when the host's memory is larger than this.
double data_bytes_per_host(const config::Workload& w, const plan::DatasetLayout& layout, int ranks_on_host, int ranks);

}  // namespace trainio::report
