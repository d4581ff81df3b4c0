#pragma once
// The workload's resolved values as JSON (summary.json's trainio.workload.config; what `report`
// and `compare` group and compare runs by): every key with its value, nested by section.

#include <nlohmann/json.hpp>

#include "config/workload.hpp"

namespace trainio::report {

nlohmann::ordered_json workload_config_json(const config::Workload& w);

}  // namespace trainio::report
