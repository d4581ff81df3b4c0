#pragma once
// The client-capacity estimate (summary.json's trainio.train.client_capacity) recomputed from the
// records by docs/metrics.md's formula ("Client capacity"), with code of its own.

#include <string>

#include "verify/checks.hpp"
#include "verify/run_totals.hpp"

namespace trainio::verify {

void check_capacity(const std::string& folder, const JsonValue& summary, const RunTotals& totals, Checks& checks);

}  // namespace trainio::verify
