#pragma once
// Rules that span several keys (DLIO's ConfigArguments.validate() and trainio's own).

#include <string>

#include "config/workload.hpp"

namespace trainio::config {

// Throws a config error for an impossible combination; adds notes for doubtful ones.
void validate(Workload& w);

// Throws a config error (`message`, `hint`) unless `ok`: the rules' one way of refusing.
void require(bool ok, const std::string& message, const std::string& hint);
// The Parquet keys' rules (validate_parquet.cpp); part of validate().
void validate_parquet(Workload& w);
// The checkpoint write layout's rules (validate_checkpoint.cpp); part of validate().
void validate_checkpoint_layout(Workload& w);

}  // namespace trainio::config
