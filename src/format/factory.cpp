#include <fmt/format.h>

#include "format/format.hpp"
#include "format/npz.hpp"
#include "util/error.hpp"

namespace trainio::format {

bool is_supported(config::Format f) { return f == config::Format::npz; }

namespace {
Error unsupported(config::Format f) {
  return config_error(fmt::format("dataset.format '{}' is not built into trainio yet", config::to_string(f)),
                      "use dataset.format=npz for now");
}
}  // namespace

std::unique_ptr<FileWriter> make_writer(const config::Workload& w) {
  switch (w.dataset.format) {
    case config::Format::npz: return std::make_unique<NpzWriter>();
    default: throw unsupported(w.dataset.format);
  }
}

std::unique_ptr<SampleReader> make_reader(const config::Workload& w) {
  switch (w.dataset.format) {
    case config::Format::npz: return std::make_unique<NpzReader>();
    default: throw unsupported(w.dataset.format);
  }
}

}  // namespace trainio::format
