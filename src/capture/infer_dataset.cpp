#include "capture/infer_dataset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "format/numpy/npy.hpp"
#include "format/sniff.hpp"

namespace trainio::capture {

namespace {

// The bytes around DLIO's sample: numpy.savez's ZIP and NPY headers of x (uint8) and y (a label),
// and np.save's NPY header (padded to 128 bytes), for arrays under 4 GiB.
constexpr double kNpzOverhead = 498, kNpyOverhead = 128;

std::string head_of(const std::string& path, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string out(n, '\0');
  in.read(out.data(), static_cast<std::streamsize>(n));
  out.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
  return out;
}

std::uint64_t le(const std::string& b, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

// The array bytes of an .npy, or of an .npz's first (stored) member; 0 when it cannot tell.
std::uint64_t npy_data_bytes(const std::string& path, bool zipped) {
  const std::string b = head_of(path, 8192);
  std::size_t at = 0;
  if (zipped) {
    if (b.size() < 30 || le(b, 8, 2) != 0) return 0;  // deflated members: not from the first bytes
    at = 30 + le(b, 26, 2) + le(b, 28, 2);
  }
  if (at >= b.size()) return 0;
  const auto h = format::npy::parse_header(std::string_view(b).substr(at));
  return h ? h->data_bytes() : 0;
}

// Records of a TFRecord file and their data bytes, walking the length fields.
std::pair<std::uint64_t, std::uint64_t> tfrecord_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::uint64_t records = 0, bytes = 0;
  char head[12];
  while (in.read(head, 12)) {
    std::uint64_t n = 0;
    std::memcpy(&n, head, 8);
    ++records, bytes += n;
    in.seekg(static_cast<std::streamoff>(n + 4), std::ios::cur);
  }
  return {records, bytes};
}

std::string size_text(double b) { return fmt::format("{:.0f}", b); }

}  // namespace

DatasetFacts infer_dataset(const Profile& p, std::uint32_t dir, const InferOptions& options, Inference& out) {
  DatasetFacts facts;
  const DirStats& d = p.dirs()[dir];
  std::vector<const FileStats*> files;
  for (std::uint32_t i : d.files)
    if (p.files()[i].read_bytes > 0) files.push_back(&p.files()[i]);
  facts.files = files.size();
  std::vector<std::uint32_t> passes;
  std::vector<double> sizes;
  for (const auto* f : files) {
    passes.push_back(f->passes());
    sizes.push_back(static_cast<double>(f->known_size()));
  }
  std::sort(passes.begin(), passes.end());
  facts.passes = passes.empty() ? 0 : passes[passes.size() / 2];
  const bool stat_sizes = std::all_of(files.begin(), files.end(), [](const FileStats* f) { return f->size > 0; });
  double mean = 0, var = 0;
  for (double s : sizes) mean += s;
  mean /= std::max<std::size_t>(1, sizes.size());
  for (double s : sizes) var += (s - mean) * (s - mean);
  const double stdev = sizes.size() > 1 ? std::sqrt(var / static_cast<double>(sizes.size() - 1)) : 0;

  // Format: the first bytes of a file still at its traced path, else the file names.
  const std::string& first = files.front()->path;
  std::string how;
  if (options.read_files) {
    const std::string head = head_of(first, format::kSniffBytes);
    if (const auto f = format::sniff(head)) {
      facts.format = std::string(config::to_string(*f));
      how = fmt::format("from the first bytes of {} (still at its traced path)", first);
    }
  }
  if (facts.format.empty()) {
    const std::string ext = first.substr(first.rfind('.') + 1);
    for (const auto& [name, fmt_value] : std::initializer_list<std::pair<const char*, const char*>>{
             {"npz", "npz"}, {"npy", "npy"}, {"h5", "hdf5"}, {"hdf5", "hdf5"}, {"tfrecord", "tfrecord"}, {"jpg", "jpeg"},
             {"jpeg", "jpeg"}, {"png", "png"}, {"parquet", "parquet"}, {"tar", "tar"}, {"csv", "csv"}})
      if (ext == name) facts.format = fmt_value, how = fmt::format("from the file names (*.{}); the files were not there to read", ext);
  }
  if (facts.format.empty()) {
    out.unknown.push_back("dataset.format: the files are gone and their names say nothing; indexed_binary assumed");
    facts.format = "indexed_binary";
    how = "assumed: neither bytes nor names tell";
  }
  out.set("dataset.format", facts.format, how, how.starts_with("from the first") ? "high" : "low");
  out.set("dataset.num_files_train", std::to_string(facts.files),
          fmt::format("{} files of {} were read", facts.files, d.path), "high");

  // Sample size and samples per file.
  const std::string size_source = stat_sizes ? "the sizes fstat/stat reported" : "the furthest byte read of each file";
  double record = mean, record_stdev = stdev;
  std::string record_how = fmt::format("mean file size ({})", size_source), confidence = "medium";
  const LogHistogram& reads = d.read_sizes;
  if (facts.format == "npz" || facts.format == "npy") {
    const std::uint64_t data = options.read_files ? npy_data_bytes(first, facts.format == "npz") : 0;
    if (data > 0) {
      const double overhead = static_cast<double>(files.front()->known_size()) - static_cast<double>(data);
      record = mean - overhead;
      record_how = fmt::format("the array in {} holds {} bytes (its header read from the file); mean file size less "
                               "the {:.0f} bytes of ZIP and NPY headers",
                               first, data, overhead);
      confidence = "high";
    } else {
      // Less the headers numpy writes around DLIO's arrays, as a d x d sample as DLIO's generator
      // makes it: the nearest square.
      const bool npz = facts.format == "npz";
      const double overhead = npz ? kNpzOverhead : kNpyOverhead;
      const double side = std::round(std::sqrt(std::max(1.0, mean - overhead)));
      record = side * side;
      record_how += fmt::format(", less the {:.0f} bytes of headers {} adds to DLIO's arrays, as the nearest {:.0f} x {:.0f} "
                                "sample (the file could not be read)",
                                overhead, npz ? "numpy.savez" : "np.save", side, side);
    }
    out.set("dataset.num_samples_per_file", "1", "np.load reads the whole array: one sample per file to storage", "medium");
  } else if (facts.format == "tfrecord") {
    const auto [records, bytes] = options.read_files ? tfrecord_records(first) : std::pair<std::uint64_t, std::uint64_t>{0, 0};
    if (records > 0) {
      facts.samples_per_file = records;
      record = static_cast<double>(bytes) / static_cast<double>(records);
      record_stdev = 0;
      record_how = fmt::format("{} records of {} data bytes in all in {} (its length fields walked)", records, bytes, first);
      confidence = "high";
      out.set("dataset.num_samples_per_file", std::to_string(records), fmt::format("records in {}", first), "high");
    } else {
      out.unknown.push_back("dataset.num_samples_per_file: the TFRecord files are gone; one record per file assumed");
      out.set("dataset.num_samples_per_file", "1", "assumed: the records are not visible in the reads", "low");
    }
  } else if (facts.format == "hdf5") {
    // h5py reads a sample of a contiguous dataset in one call: count the file's distinct large reads.
    // h5py reads a sample of a contiguous dataset in one call: the file's distinct reads of the
    // commonest size are its samples.
    const int mode = reads.mode();
    std::vector<std::uint64_t> per_file, sizes_seen;
    for (const auto* f : files) {
      std::uint64_t n = 0;
      for (const auto& o : f->offsets)
        if (LogHistogram::bucket(o.bytes) == mode) ++n, sizes_seen.push_back(o.bytes);
      per_file.push_back(n);
    }
    std::sort(per_file.begin(), per_file.end());
    std::sort(sizes_seen.begin(), sizes_seen.end());
    const std::uint64_t samples = per_file.empty() ? 0 : per_file[per_file.size() / 2];
    const std::uint64_t sample = sizes_seen.empty() ? 0 : sizes_seen[sizes_seen.size() / 2];
    facts.samples_per_file = std::max<std::uint64_t>(1, samples);
    record = sample > 0 ? static_cast<double>(sample) : mean / static_cast<double>(facts.samples_per_file);
    record_stdev = stdev / static_cast<double>(facts.samples_per_file);
    record_how = fmt::format("the median size of those reads (one h5py read per sample of a contiguous dataset)");
    out.set("dataset.num_samples_per_file", std::to_string(facts.samples_per_file),
            fmt::format("the median count, per file, of distinct offsets read with the commonest read size ({} bytes)", sample),
            samples > 0 && samples < FileStats::kOffsetsKept ? "medium" : "low");
  } else {
    out.set("dataset.num_samples_per_file", "1", "one sample per file: the job reads each file whole", "medium");
  }
  facts.record_bytes = std::max(1.0, record);
  facts.record_stdev = record_stdev;
  out.set("dataset.record_length_bytes", size_text(facts.record_bytes), record_how, confidence);
  if (facts.record_stdev >= 1)
    out.set("dataset.record_length_bytes_stdev", size_text(facts.record_stdev),
            fmt::format("the spread (standard deviation) of {} over the files", size_source), "medium");
  out.set("dataset.data_folder", options.data_folder,
          fmt::format("the job read {}; the replay generates its own files here (never the traced ones)", d.path), "high");
  return facts;
}

}  // namespace trainio::capture
