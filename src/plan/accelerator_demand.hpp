#pragma once
// What one emulated accelerator asks of the storage, and how many a storage bandwidth can feed.
// The model: a rank consumes a batch per step of emulated compute; with reads overlapping compute
// (prefetch), its AU is about min(1, supply / demand), where supply is its share of the storage
// bandwidth. So N accelerators meet an AU target t while bandwidth / N >= t x demand. It leaves
// out what a run measures: the reading CPU, metadata, the network, stragglers and the page cache.

#include "config/workload.hpp"
#include "plan/layout.hpp"

namespace trainio::plan {

// Bytes per second one accelerator reads to stay busy: mean sample bytes x batch / compute time
// per step. 0 when the workload has no compute time (it can never wait on anything else).
double accelerator_demand(const config::Workload& w, const DatasetLayout& layout);

// The most accelerators `bandwidth` (bytes/s) feeds at AU >= `au_target` (0..1], by the model
// above. Only for a demand and a target above 0 (with either at 0 every count passes).
long predicted_accelerators(double bandwidth, double demand, double au_target);

}  // namespace trainio::plan
