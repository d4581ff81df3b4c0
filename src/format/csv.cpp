#include "format/csv.hpp"

#include <fmt/format.h>

#include <charconv>
#include <string>

#include "format/stream_writer.hpp"

namespace trainio::format {

void CsvWriter::write_bytes(const plan::DataFile& f, storage::File& out, ContentSource& content) {
  const std::uint64_t columns = f.sample.elements();
  StreamWriter w(out, buffer_);
  std::string line;
  line.reserve(64 * 1024);
  auto flush_line = [&](bool force) {
    if (force || line.size() > 60 * 1024) {
      w.append(line);
      line.clear();
    }
  };
  for (std::uint64_t c = 0; c < columns; ++c) {
    line += ',';
    line += std::to_string(c);
    flush_line(false);
  }
  line += '\n';
  values_.resize(64 * 1024);
  char digits[24];
  for (std::uint64_t row = 0; row < f.num_samples; ++row) {
    line += std::to_string(row);
    for (std::uint64_t c = 0; c < columns;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(values_.size(), columns - c));
      content.fill(values_.data(), n);
      for (std::size_t k = 0; k < n; ++k) {
        line += ',';
        // numpy.random.randint(255): values 0..254, as DLIO draws them.
        const auto end = std::to_chars(digits, digits + sizeof digits, values_[k] % 255).ptr;
        line.append(digits, end);
      }
      c += n;
      flush_line(false);
    }
    line += '\n';
    flush_line(false);
  }
  flush_line(true);
  w.flush();
}

std::optional<std::string> validate_csv(const plan::DataFile& f) {
  storage::File in = storage::File::open(f.path);
  const std::uint64_t size = in.size();
  const std::uint64_t columns = f.sample.elements();
  std::vector<char> chunk(1 << 20);
  std::uint64_t line = 0, fields = 0, at = 0;
  std::string field;
  for (std::uint64_t offset = 0; offset < size;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - offset));
    in.pread_exact(chunk.data(), n, offset);
    offset += n;
    for (std::size_t i = 0; i < n; ++i, ++at) {
      const char c = chunk[i];
      if (c != ',' && c != '\n') {
        if (c < '0' || c > '9') return fmt::format("line {}: unexpected character at byte {}", line + 1, at);
        field += c;
        continue;
      }
      // The header's first field is empty; every other field is a number.
      if (line > 0 || fields > 0) {
        std::uint64_t v = 0;
        if (field.empty() || std::from_chars(field.data(), field.data() + field.size(), v).ec != std::errc())
          return fmt::format("line {}: field {} is not a number", line + 1, fields + 1);
        const std::uint64_t want = fields == 0 ? line - 1 : fields - 1;
        if (line == 0 && v != want) return fmt::format("header: column {} is named {}", fields, v);
        if (line > 0 && fields == 0 && v != want) return fmt::format("line {}: row index {}, expected {}", line + 1, v, want);
        if (line > 0 && fields > 0 && v > 254) return fmt::format("line {}: value {} out of range", line + 1, v);
      }
      field.clear();
      ++fields;
      if (c == '\n') {
        if (fields != columns + 1) return fmt::format("line {}: {} fields, expected {}", line + 1, fields, columns + 1);
        ++line;
        fields = 0;
      }
    }
  }
  if (fields != 0 || !field.empty()) return std::string("the last line is cut short");
  if (line != f.num_samples + 1) return fmt::format("{} rows, expected {}", line == 0 ? 0 : line - 1, f.num_samples);
  return std::nullopt;
}

}  // namespace trainio::format
