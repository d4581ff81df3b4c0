#include "plan/layout.hpp"


#include <charconv>
#include <cmath>

#include "config/sizes.hpp"
#include "util/paths.hpp"
#include "util/rng.hpp"

namespace trainio::plan {

namespace {

// Sizes are drawn from a fixed seed, like DLIO's generators (np.random.seed(10)): the dataset
// must not change when train.seed changes between runs, or every run would need new data.
constexpr std::uint64_t kSizeSeed = 10;

}  // namespace

const char* split_folder(Split s) { return s == Split::train ? "train" : "valid"; }

std::uint64_t SampleShape::elements() const {
  std::uint64_t n = 1;
  for (const auto d : shape()) n *= d;
  return n;
}

std::uint64_t SampleShape::bytes() const { return elements() * config::element_size(dtype); }

std::string pad_index(std::uint64_t n, std::uint64_t count) {
  const std::string digits = std::to_string(n);
  const size_t width = std::to_string(count).size();
  return digits.size() >= width ? digits : std::string(width - digits.size(), '0') + digits;
}

DatasetLayout::DatasetLayout(const config::Workload& w)
    : format_(w.dataset.format),
      prefix_(w.dataset.file_prefix),
      extension_(config::extension(w.dataset.format)),
      files_train_(static_cast<std::uint64_t>(w.dataset.num_files_train)),
      files_eval_(static_cast<std::uint64_t>(w.dataset.num_files_eval)),
      samples_per_file_(static_cast<std::uint64_t>(w.dataset.num_samples_per_file)),
      subfolders_train_(static_cast<std::uint64_t>(w.dataset.num_subfolders_train)),
      subfolders_eval_(static_cast<std::uint64_t>(w.dataset.num_subfolders_eval)),
      nominal_record_bytes_(config::nominal_record_bytes(w.dataset)),
      stdev_bytes_(w.dataset.record_length_bytes_stdev),
      sides_(config::sample_sides(w.dataset)),
      record_dims_(w.dataset.record_dims),
      dtype_(w.dataset.record_element_type) {
  root_ = util::strip_trailing_slashes(util::join(w.storage.storage_root, w.dataset.data_folder));
}

SampleShape DatasetLayout::sample_shape(Split s, std::uint64_t index) const {
  SampleShape shape;
  shape.dtype = dtype_;
  if (!record_dims_.empty()) {
    for (const auto d : record_dims_) shape.push(d);
    return shape;
  }
  // DLIO's generators: a d x d sample with d = floor(sqrt(record_length)); with a stdev each file
  // draws both sides from normal(d, stdev / 2 / sqrt(record_length)), truncated, at least 1 and at
  // most the bound config::check_sizes() proved representable (see config/sizes.hpp).
  std::uint64_t d1 = static_cast<std::uint64_t>(sides_.side), d2 = d1;
  if (sides_.stdev > 0) {
    util::Rng rng(util::derive_seed(kSizeSeed, static_cast<std::uint64_t>(s), index));
    auto draw = [&] {
      const double v = std::min(sides_.side + sides_.stdev * rng.normal(), sides_.max_side);
      return v < 1.0 ? std::uint64_t{1} : static_cast<std::uint64_t>(v);
    };
    d1 = draw();
    d2 = draw();
  }
  shape.push(d1);
  shape.push(d2);
  return shape;
}

namespace {

void append_number(std::string& out, std::uint64_t n) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, end);
}

void append_padded(std::string& out, std::uint64_t n, std::uint64_t count) {
  char digits[24], width_digits[24];
  const auto len = std::to_chars(digits, digits + sizeof digits, n).ptr - digits;
  const auto width = std::to_chars(width_digits, width_digits + sizeof width_digits, count).ptr - width_digits;
  if (width > len) out.append(static_cast<size_t>(width - len), '0');
  out.append(digits, static_cast<size_t>(len));
}

}  // namespace

void DatasetLayout::path_into(Split s, std::uint64_t index, std::string& out) const {
  // <root>/<train|valid>[/<sub>]/<prefix>_<i>_of_<N>.<ext>; subfolders only when more than one
  // (as DLIO does).
  const std::uint64_t count = num_files(s);
  const std::uint64_t subfolders = s == Split::train ? subfolders_train_ : subfolders_eval_;
  out.clear();
  out += root_;
  out += '/';
  out += split_folder(s);
  if (subfolders > 1) {
    out += '/';
    append_padded(out, index % subfolders, subfolders);
  }
  out += '/';
  out += prefix_;
  out += '_';
  append_padded(out, index, count);
  out += "_of_";
  append_number(out, count);
  out += '.';
  out += extension_;
}

DataFile DatasetLayout::file(Split s, std::uint64_t index) const {
  DataFile f;
  f.split = s;
  f.index = index;
  path_into(s, index, f.path);
  f.relative = f.path.substr(root_.size() + 1);
  f.sample = sample_shape(s, index);
  f.num_samples = samples_per_file_;
  return f;
}

std::uint64_t DatasetLayout::total_data_bytes(Split s) const {
  const std::uint64_t n = num_files(s);
  if (!sizes_vary()) return n * samples_per_file_ * sample_shape(s, 0).bytes();
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; i < n; ++i) total += sample_shape(s, i).bytes() * samples_per_file_;
  return total;
}

std::vector<std::string> DatasetLayout::folders() const {
  std::vector<std::string> out;
  // TFRecord datasets carry DALI's index files beside the data.
  if (format_ == config::Format::tfrecord) {
    out.emplace_back("index");
    for (Split s : {Split::train, Split::eval})
      if (num_files(s) > 0) out.push_back(std::string("index/") + split_folder(s));
  }
  for (Split s : {Split::train, Split::eval}) {
    if (num_files(s) == 0) continue;
    out.emplace_back(split_folder(s));
    const std::uint64_t sub = s == Split::train ? subfolders_train_ : subfolders_eval_;
    if (sub > 1)
      for (std::uint64_t i = 0; i < sub; ++i) out.push_back(std::string(split_folder(s)) + "/" + pad_index(i, sub));
  }
  return out;
}

DataFile DatasetLayout::file_by_global_index(std::uint64_t k) const {
  return k < files_train_ ? file(Split::train, k) : file(Split::eval, k - files_train_);
}

}  // namespace trainio::plan
