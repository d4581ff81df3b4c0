#pragma once
// A rank's per-step lists (`<rank>_output.json`: load, proc, compute and barrier per block and
// evaluation) as `trainio verify` needs them, read as a stream so that a file of millions of steps
// costs a few numbers per block: each list's count, sum, first and last values (for DLIO's
// excluded steps) and the latency distribution of its values, and the AU and throughput the file
// reports per block.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "verify/json_stream.hpp"
#include "verify/json_view.hpp"
#include "verify/latency.hpp"

namespace trainio::verify {

// One list of step times, reduced as its values come.
struct Series {
  std::uint64_t n = 0;
  double sum = 0;
  std::vector<double> head;  // the first `s` values
  std::vector<double> tail;  // the last `e` values, oldest first (e is a step or two)
  Latency ns;                // the values in nanoseconds, round(seconds x 1e9)
  void add(double seconds, std::uint64_t s, std::uint64_t e);
};

struct StepBlock {
  Series load, proc, compute, barrier;
  std::optional<double> reported_au, reported_throughput;  // as the file gives them (AU in percent)
  bool reported = false;  // the file has the block's au and throughput keys
};

// The steps of one phase of one epoch: its blocks (one for an evaluation) and the phase as a whole.
struct StepPhase {
  std::vector<StepBlock> blocks;
  StepBlock whole;
};

// Keyed by (epoch, "train" | "eval").
using StepLists = std::map<std::pair<std::uint64_t, std::string>, StepPhase>;

// Reads `path`; `s` and `e` are output.metric.exclude_start_steps and exclude_end_steps. Throws a
// data error naming the file when it is missing or not the JSON DLIO's per-rank file is.
StepLists read_step_lists(const std::string& path, std::uint64_t s, std::uint64_t e);

// The same file read epoch by epoch (one epoch's member in memory at a time), in the order the run
// writes the epochs. Throws a data error naming the file when it is missing, damaged, or holds an
// epoch after a later one.
class StepListsReader {
 public:
  StepListsReader(std::string path, std::uint64_t s, std::uint64_t e);
  // The lists of `epoch`: the file is read on to it (empty lists: the file has none of it).
  const StepLists& epoch(std::uint64_t epoch);
  // The epoch's member of the file as read (invalid when it has none): valid until the next epoch().
  JsonValue member(std::uint64_t epoch) const { return epoch == epoch_ && read_ ? doc_.root() : JsonValue(); }

 private:
  [[noreturn]] void damaged(const std::string& what) const;
  std::string path_;
  std::uint64_t s_, e_;
  JsonStream stream_;
  bool done_ = false, read_ = false;  // the file's end reached; epoch_'s member read
  std::uint64_t epoch_ = 0;
  std::string key_, text_;
  JsonDoc doc_;
  StepLists lists_, none_;
};

}  // namespace trainio::verify
