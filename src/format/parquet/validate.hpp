#pragma once
// `trainio validate` for Parquet files: magic at both ends, a footer that decodes, the row and
// column counts the workload implies, and every column chunk's pages adding up to its sizes and
// value count (page headers are read; values are not).

#include <optional>
#include <string>

#include "config/workload.hpp"
#include "plan/layout.hpp"

namespace trainio::format::parquet {

std::optional<std::string> validate_file(const config::Workload& w, const plan::DataFile& file);

}  // namespace trainio::format::parquet
