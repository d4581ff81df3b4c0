#pragma once
// `trainio verify` of loads on another layout than the save's (docs/checkpoints.md, "Restart on
// another layout"): each load's read amplification and readers per file, recomputed from the
// ranks' `reshard_load` records, whose bytes must be those of the load's storage calls.

#include <string>

#include "verify/checks.hpp"
#include "verify/json_view.hpp"

namespace trainio::verify {

// Nothing to check when no load of the summary was resharded and no record says one was.
void check_reshard_loads(const std::string& folder, const JsonValue& summary, int ranks, Checks& checks);

}  // namespace trainio::verify
