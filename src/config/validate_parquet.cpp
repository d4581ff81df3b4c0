// The Parquet rules: what the MLCommons DLIO fork's keys may combine to, and what trainio's
// Parquet writer and reader do not do.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "config/validate.hpp"
#include "util/error.hpp"

namespace trainio::config {

void validate_parquet(Workload& w) {
  const auto& d = w.dataset;
  const auto& p = d.parquet;
  if (d.format != Format::parquet) {
    if (!p.columns.empty() || !w.storage.storage_options.columns.empty())
      w.notes.push_back({"dataset.parquet.columns", fmt::format("the Parquet column keys have no effect on '{}' files",
                                                                to_string(d.format))});
    return;
  }
  require(d.compression == Compression::none || d.compression == Compression::gzip || d.compression == Compression::zstd,
          fmt::format("dataset.compression '{}' is not a Parquet codec trainio writes", to_string(d.compression)),
          "use dataset.compression=none, gzip (the DLIO fork's) or zstd");
  require(p.partition_by.empty(),
          fmt::format("dataset.parquet.partition_by '{}': Hive-partitioned Parquet datasets are not supported", p.partition_by),
          "remove dataset.parquet.partition_by (one file per dataset file, as the fork writes without it)");
  require(!w.reader.odirect, "reader.odirect with dataset.format 'parquet': the DLIO fork refuses it too",
          "remove reader.odirect");
  std::set<std::string> names;
  for (const auto& c : p.columns) {
    require(names.insert(c.name).second, fmt::format("dataset.parquet.columns names '{}' twice", c.name),
            "give every column its own name");
    // A page holds at least one row of a column, and a page's size is a 32-bit field. Compared
    // by division: size x element size can pass 2^64 and wrap to a small number.
    const std::uint64_t element = element_size(c.dtype);
    require(c.size <= ((1ull << 30) - 1) / element,
            fmt::format("dataset.parquet.columns: column '{}' holds {} elements of {} bytes per row, more than a Parquet "
                        "page can (under 1 GiB)",
                        c.name, c.size, element),
            "use fewer elements per row (size)");
  }
  if (p.columns.empty()) names.insert("data");  // the fork's single column without a schema
  for (const auto& name : w.storage.storage_options.columns)
    require(names.contains(name),
            fmt::format("storage.storage_options.columns names '{}', which is not a column of the dataset", name),
            p.columns.empty() ? "without dataset.parquet.columns the only column is 'data'"
                              : "name columns of dataset.parquet.columns (or leave storage_options.columns empty: all read)");
  const bool any_read = p.columns.empty() || std::any_of(p.columns.begin(), p.columns.end(), [&](const ParquetColumn& c) {
    const auto& chosen = w.storage.storage_options.columns;
    return c.read && (chosen.empty() || std::find(chosen.begin(), chosen.end(), c.name) != chosen.end());
  });
  require(any_read, "the Parquet reader would read no column: every column has read: false or is left out of "
                    "storage.storage_options.columns",
          "set read: true on a column, or name one in storage.storage_options.columns");
  if (!p.columns.empty() && d.record_length_bytes_stdev > 0)
    w.notes.push_back({"dataset.record_length_bytes_stdev",
                       "record_length_bytes_stdev has no effect with dataset.parquet.columns: a row holds the columns' sizes"});
}

}  // namespace trainio::config
