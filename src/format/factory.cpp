#include <fmt/format.h>

#include "format/format.hpp"
#include "format/npy_file.hpp"
#include "format/npz.hpp"
#include "format/tfrecord.hpp"
#include "util/error.hpp"

namespace trainio::format {

bool is_supported(config::Format f) {
  return f == config::Format::npz || f == config::Format::npy || f == config::Format::tfrecord;
}

namespace {
Error unsupported(config::Format f) {
  return config_error(fmt::format("dataset.format '{}' is not built into trainio yet", config::to_string(f)),
                      "use dataset.format=npz or npy for now");
}
}  // namespace

std::unique_ptr<FileWriter> make_writer(const config::Workload& w) {
  const auto& d = w.dataset;
  switch (d.format) {
    case config::Format::npz:
      return std::make_unique<NpzWriter>(d.compression == config::Compression::zip ? static_cast<int>(d.compression_level) : -1);
    case config::Format::npy: return std::make_unique<NpyWriter>();
    case config::Format::tfrecord: return std::make_unique<TfRecordWriter>();
    default: throw unsupported(d.format);
  }
}

std::unique_ptr<SampleReader> make_reader(const config::Workload& w) {
  switch (w.dataset.format) {
    case config::Format::npz: return std::make_unique<NpzReader>();
    case config::Format::npy: return std::make_unique<NpyReader>();
    case config::Format::tfrecord: return std::make_unique<DaliTfRecordReader>();
    default: throw unsupported(w.dataset.format);
  }
}

std::optional<std::string> validate_file(const config::Workload& w, const plan::DataFile& file) {
  switch (w.dataset.format) {
    case config::Format::npz: return validate_npz(file);
    case config::Format::npy: return validate_npy(file);
    case config::Format::tfrecord: return validate_tfrecord(file);
    default: throw unsupported(w.dataset.format);
  }
}

}  // namespace trainio::format
