#pragma once
// `trainio verify` of asynchronous checkpoints (checkpoint.async, docs/checkpoints.md): each
// save's stall and flush, and each epoch's training steps with and without a flush running,
// recomputed from the ranks' `async_save` and `async_overlap` records and their step lists, as
// the ranks' lines are read epoch by epoch.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "verify/checks.hpp"
#include "verify/json_view.hpp"
#include "verify/records.hpp"

namespace trainio::verify {

class AsyncChecks {
 public:
  AsyncChecks(int ranks, Checks& checks);
  ~AsyncChecks();
  // Whether the run saved asynchronously: the summary has trainio.checkpoint.async.
  static bool wanted(const JsonValue& summary);

  // A rank's lines as its reader hands them over (the caller serialises the calls). `steps`: the
  // member of <rank>_output.json of an overlap's epoch (invalid when the file has none).
  void phase(int rank, const PhaseLine& p);
  void checkpoint(int rank, const CheckpointLine& c);
  void line(int rank, const std::string& kind, const JsonValue& line, const JsonValue& steps);
  // An epoch every rank's lines of are in: its flush overlap against the summary's entry of it.
  void epoch(std::uint64_t epoch, const JsonValue& entry);
  // Once every line is read: the saves against the summary.
  void finish(const JsonValue& summary);

 private:
  struct State;
  std::unique_ptr<State> state_;
  int ranks_;
  Checks& checks_;
};

}  // namespace trainio::verify
