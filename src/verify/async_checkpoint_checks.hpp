#pragma once
// `trainio verify` of asynchronous checkpoints (checkpoint.async, docs/checkpoints.md): each
// save's stall and flush, and each epoch's training steps with and without a flush running,
// recomputed from the ranks' `async_save` and `async_overlap` records and their step lists.

#include <string>

#include "verify/checks.hpp"
#include "verify/json_view.hpp"

namespace trainio::verify {

// Nothing to check when the summary has no trainio.checkpoint.async (synchronous saves).
void check_async_checkpoints(const std::string& folder, const JsonValue& summary, int ranks, Checks& checks);

}  // namespace trainio::verify
