#include "format/parquet/validate.hpp"

#include <fmt/format.h>

#include "format/parquet/footer.hpp"
#include "format/parquet/thrift.hpp"

namespace trainio::format::parquet {

namespace {

// A page header is small; this much read at a page's start holds it.
constexpr std::size_t kHeaderRead = 256;
constexpr std::size_t kLongHeaderRead = 64 * 1024;

// Walks the pages of one chunk: their headers' sizes must tile the chunk exactly and their
// value counts add up to the chunk's.
std::optional<std::string> check_pages(storage::File& in, const ColumnChunkMeta& k, const std::string& where) {
  std::string head;
  const std::uint64_t begin = static_cast<std::uint64_t>(k.start());
  const std::uint64_t end = begin + static_cast<std::uint64_t>(k.total_compressed_size);
  std::uint64_t at = begin, values = 0, uncompressed = 0;
  while (at < end) {
    std::size_t used = 0;
    PageHeader h;
    // Headers with statistics of long values (other writers') may pass kHeaderRead: read more.
    for (std::uint64_t want = kHeaderRead;; want = kLongHeaderRead) {
      head.resize(static_cast<std::size_t>(std::min<std::uint64_t>(want, end - at)));
      in.pread_exact(head.data(), head.size(), at);
      try {
        h = decode_page_header(head, used);
        break;
      } catch (const thrift::ThriftError& e) {
        if (want < kLongHeaderRead && head.size() < end - at) continue;
        return fmt::format("{}: a damaged page header at offset {}: {}", where, at, e.what());
      }
    }
    if (at + used + static_cast<std::uint64_t>(h.compressed_page_size) > end)
      return fmt::format("{}: the page at offset {} runs past its column chunk", where, at);
    if (h.type == PageType::data_page || h.type == PageType::data_page_v2) values += static_cast<std::uint64_t>(h.num_values);
    uncompressed += used + static_cast<std::uint64_t>(h.uncompressed_page_size);
    at += used + static_cast<std::uint64_t>(h.compressed_page_size);
  }
  if (values != static_cast<std::uint64_t>(k.num_values))
    return fmt::format("{}: its pages hold {} values, the footer says {}", where, values, k.num_values);
  if (uncompressed != static_cast<std::uint64_t>(k.total_uncompressed_size))
    return fmt::format("{}: its pages hold {} bytes uncompressed, the footer says {}", where, uncompressed, k.total_uncompressed_size);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate_file(const config::Workload& w, const plan::DataFile& file) {
  storage::File in = storage::File::open(file.path);
  const std::uint64_t size = in.size();
  if (size >= kMagic.size()) {
    char magic[4];
    in.pread_exact(magic, sizeof magic, 0);
    if (std::string_view(magic, 4) != kMagic) return std::string("does not start with the Parquet magic PAR1");
  }
  Footer footer;
  std::string scratch;
  if (auto wrong = read_footer(in, size, scratch, footer)) return wrong;
  const Schema schema = schema_of(w, file);
  if (auto wrong = check_structure(footer, schema.columns, file.num_samples)) return wrong;
  for (std::size_t g = 0; g < footer.meta.row_groups.size(); ++g) {
    const auto& rg = footer.meta.row_groups[g];
    for (std::size_t c = 0; c < rg.columns.size(); ++c)
      if (auto wrong = check_pages(in, rg.columns[c], fmt::format("row group {} column '{}'", g, schema.columns[c].name)))
        return wrong;
  }
  return std::nullopt;
}

}  // namespace trainio::format::parquet
