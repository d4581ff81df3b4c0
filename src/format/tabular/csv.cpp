#include "format/tabular/csv.hpp"

#include <fmt/format.h>

#include <charconv>
#include <string>

#include "format/tabular/csv_rows.hpp"
#include "format/tabular/csv_scan.hpp"
#include "format/stream_writer.hpp"
#include "util/error.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format {

namespace {
constexpr std::size_t kPandasChunk = 1u << 18;  // pandas' C parser asks for 256 KiB at a time
}

void CsvWriter::write_bytes(const plan::DataFile& f, storage::Output& out, ContentSource& content) {
  const std::uint64_t columns = f.sample.elements();
  StreamWriter w(out, buffer_, beside_);
  std::string line;
  line.reserve(64 * 1024);
  values_.resize(64 * 1024);
  char digits[8];
  for (std::uint64_t row = 0; row < f.num_samples; ++row) {
    for (std::uint64_t c = 0; c < columns;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(values_.size(), columns - c));
      content.fill(values_.data(), n);
      for (std::size_t k = 0; k < n; ++k) {
        if (c + k > 0) line += ',';
        // DLIO draws uint8 values as floor(uniform * 255): 0..254.
        const auto end = std::to_chars(digits, digits + sizeof digits, values_[k] % 255).ptr;
        line.append(digits, end);
      }
      c += n;
      if (line.size() > 60 * 1024) {
        w.append(line);
        line.clear();
      }
    }
    line += '\n';
  }
  w.append(line);
  w.flush();
}

namespace {

Error not_the_csv(const std::string& path, const std::string& what) {
  return data_error(fmt::format("'{}' does not hold the rows the dataset's settings describe: {}", path, what),
                    "the file is damaged or was written for other settings: regenerate the dataset with 'trainio generate'");
}

}  // namespace

std::uint64_t CsvReader::read(const SampleRequest& r) {
  const std::string& path = *r.path;
  const plan::SampleShape& shape = r.shape;
  const std::uint64_t samples_in_file = r.samples_in_file;
  // pandas.read_csv(path): open(path, 'r', newline=''), then TextIOWrapper.read(256 KiB) until
  // it returns nothing. A text read loops over BufferedReader.read1 until it has what it asked
  // for or the file ends. The rows read are checked against the plan as they arrive (CsvRows:
  // row count and lengths, not values: parsing is the framework's CPU time, and validate's job).
  if (chunk_.size() < kPandasChunk) chunk_.resize(kPandasChunk);
  file_.open(path);
  CsvRows scan(shape.elements(), samples_in_file);
  bool good = true;
  while (true) {
    std::size_t got = 0;
    while (got < kPandasChunk) {
      const std::size_t n = file_.read1(chunk_.data() + got, kPandasChunk - got);
      if (n == 0) break;
      got += n;
    }
    if (got == 0) break;
    if (good) good = scan.feed(reinterpret_cast<const unsigned char*>(chunk_.data()), got);
  }
  file_.close();
  if (!good || !scan.finish()) throw not_the_csv(path, scan.describe());
  return shape.bytes();  // the sample's share of the parsed table
}

std::optional<std::string> validate_csv(const plan::DataFile& f) {
  storage::File in = storage::File::open(f.path);
  const std::uint64_t size = in.size();
  CsvScan scan(f.sample.elements());
  util::Bytes chunk = util::chunk_buffer(size);
  for (std::uint64_t offset = 0; offset < size;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - offset));
    in.pread_exact(chunk.data(), n, offset);
    offset += n;
    if (!scan.feed(reinterpret_cast<const unsigned char*>(chunk.data()), n)) return scan.describe(f.num_samples);
  }
  if (!scan.finish(f.num_samples)) return scan.describe(f.num_samples);
  return std::nullopt;
}

}  // namespace trainio::format
