#pragma once
// The trace file of a rank (trace-<rank>-of-<size>.pfw in the results folder), written as the
// run goes: the sink of metrics::trace. It appears under its name only when the trace is whole
// (written under a temporary name, renamed at the end); a failed write, a full disk, fails the run
// naming the file. Its writes are trainio's bookkeeping, not the workload's I/O: not observed.

#include <memory>
#include <string>

#include "metrics/trace.hpp"

namespace trainio::report {

std::unique_ptr<metrics::trace::Sink> open_trace_file(const std::string& path);

}  // namespace trainio::report
