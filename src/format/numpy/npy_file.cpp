#include "format/numpy/npy_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstring>

#include "format/numpy/npy.hpp"
#include "format/stdio_io.hpp"
#include "format/stream_writer.hpp"
#include "util/error.hpp"

namespace trainio::format {

namespace {

Error not_npy(const std::string& path, const std::string& what) {
  return data_error(fmt::format("'{}' is not a valid NPY file: {}", path, what),
                    "regenerate the dataset with 'trainio generate' (or check dataset.format)");
}

bool shape_matches(const npy::Header& h, const plan::SampleShape& shape, std::uint64_t samples) {
  const auto dims = shape.shape();
  bool ok = h.ndims == dims.size() + 1 && h.shape[dims.size()] == samples &&
            h.item_size == config::element_size(shape.dtype);
  for (std::size_t i = 0; ok && i < dims.size(); ++i) ok = h.shape[i] == dims[i];
  return ok;
}

}  // namespace

std::string data_file_header(const plan::DataFile& f) {
  std::uint64_t shape[plan::kMaxDims + 1];
  const auto dims = f.sample.shape();
  std::copy(dims.begin(), dims.end(), shape);
  shape[dims.size()] = f.num_samples;
  return npy::header(f.sample.dtype, {shape, dims.size() + 1});
}

const std::string& NpyWriter::header_of(const plan::DataFile& f) const {
  return header_.get(f.sample, f.num_samples, [&] { return data_file_header(f); });
}

std::optional<std::uint64_t> NpyWriter::expected_size(const plan::DataFile& f) const {
  return header_of(f).size() + f.data_bytes();
}

void NpyWriter::write_bytes(const plan::DataFile& f, storage::Output& out, ContentSource& content) {
  StreamWriter w(out, buffer_, beside_);
  w.append(header_of(f));
  w.append_content(f.data_bytes(), content);
  w.flush();
}

NpyReader::NpyReader(std::size_t python_buffer_size) : file_(python_buffer_size) {}

std::uint64_t NpyReader::read(const SampleRequest& r) {
  const std::string& path = *r.path;
  const plan::SampleShape& shape = r.shape;
  const std::uint64_t samples_in_file = r.samples_in_file;
  // np.load: open, sniff the magic, step back; read_array reads magic, length and header from
  // Python's buffer.
  file_.open(path);
  char magic[6];
  file_.peek(magic, sizeof magic);
  char prelude[npy::kPreludeV1];
  if (file_.read(prelude, sizeof prelude) != sizeof prelude) throw not_npy(path, "file too short");
  const std::size_t header_len = static_cast<unsigned char>(prelude[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(prelude[9])) << 8);
  std::string& header = header_;  // kept: no allocation per sample
  header.assign(prelude, sizeof prelude);
  header.resize(sizeof prelude + header_len);
  if (file_.read(header.data() + sizeof prelude, header_len) != header_len) throw not_npy(path, "header cut short");
  std::string why;
  const auto h = npy::parse_header(header, &why);
  if (!h) throw not_npy(path, why);
  if (!shape_matches(*h, shape, samples_in_file))
    throw data_error(fmt::format("'{}' holds an array of a different shape or type than the workload expects", path),
                     "the dataset was generated for another workload: regenerate it with 'trainio generate'");

  // numpy.fromfile: dup the descriptor, fdopen it, remember its position, seek the stream to
  // Python's position, seek by 0 again (fromfile's offset), fread the data.
  StdioFile& stream = stream_;
  stream.fdopen_dup_of(file_.raw());
  const std::uint64_t original = stream.tell();
  const std::uint64_t position = file_.tell();
  stream.seek(static_cast<std::int64_t>(position), SEEK_SET);
  stream.seek(0, SEEK_CUR);
  const std::uint64_t bytes = h->data_bytes();
  if (data_.size() < bytes) data_.resize(bytes);
  const std::size_t read = stream.read(data_.data(), bytes);
  if (read != bytes)
    throw data_error(fmt::format("'{}' ends early: {} of {} data bytes", path, position + read, position + bytes),
                     "the file is truncated: regenerate the dataset with 'trainio generate'");
  // npy_PyFile_DupClose2: close the stream, put the raw offset back, seek Python's file to the end.
  const std::uint64_t end = position + bytes;
  stream.close();
  file_.raw().seek(static_cast<std::int64_t>(original), SEEK_SET);
  file_.seek(static_cast<std::int64_t>(end), SEEK_SET);
  file_.close();
  return shape.bytes();  // DLIO takes the sample out of the array
}

std::optional<std::string> validate_npy(const plan::DataFile& f) {
  storage::File in = storage::File::open(f.path);
  const std::string expected_header = data_file_header(f);
  const std::uint64_t expected = expected_header.size() + f.data_bytes();
  const std::uint64_t size = in.size();
  if (size != expected) return fmt::format("size {} bytes, expected {}", size, expected);
  std::string header(expected_header.size(), '\0');
  in.pread_exact(header.data(), header.size(), 0);
  std::string why;
  const auto h = npy::parse_header(header, &why);
  if (!h) return "bad NPY header: " + why;
  if (!shape_matches(*h, f.sample, f.num_samples)) return "the array's shape or type differs from the workload's";
  return std::nullopt;
}

}  // namespace trainio::format
