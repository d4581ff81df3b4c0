// Fuzz target: one data file of the format TRAINIO_FUZZ_FORMAT, read the two ways trainio reads a
// dataset: `validate` (format::validate_file) and a training read of each sample through the
// reader of TRAINIO_FUZZ_LOADER (compile definitions: one binary per format). The workload holds
// one file of two small samples (TRAINIO_FUZZ_RECORD_BYTES each); an empty corpus is seeded with
// the file trainio's writer makes.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "config/load.hpp"
#include "engine/generate/generator.hpp"
#include "engine/content.hpp"
#include "format/format.hpp"
#include "fuzz_support.hpp"
#include "plan/layout.hpp"

using namespace trainio;

namespace {

struct Target {
  config::Workload workload;
  plan::DataFile file;
};

const Target& target() {
  static const Target t = [] {
    const std::string folder = fuzz::scratch_folder() + "/data";
    config::Workload w = config::load_text(
        "framework: " TRAINIO_FUZZ_LOADER "\nreader:\n  data_loader: " TRAINIO_FUZZ_LOADER "\n", "fuzz.yaml", "fuzz",
        {"dataset.format=" TRAINIO_FUZZ_FORMAT, "dataset.data_folder=" + folder, "dataset.num_files_train=1",
         "dataset.num_files_eval=0", "dataset.num_samples_per_file=2", "dataset.record_length_bytes=" TRAINIO_FUZZ_RECORD_BYTES,
         "dataset.record_length_bytes_stdev=0"});
    const plan::DatasetLayout layout(w);
    format::check_workload(w, layout);  // the checks `trainio run` makes before it writes a file
    for (const auto& sub : layout.folders()) std::filesystem::create_directories(layout.root() + "/" + sub);
    plan::DataFile file = layout.file_by_global_index(0);
    return Target{std::move(w), std::move(file)};
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  const Target& t = target();
  const std::string corpus = fuzz::empty_corpus(*argc, *argv);
  if (!corpus.empty()) {
    auto writer = format::make_writer(t.workload);
    const auto content = engine::make_content(t.workload, 1);
    engine::write_data_file(*writer, t.file, *content);
    fuzz::add_seed(corpus, "generated." TRAINIO_FUZZ_FORMAT, fuzz::read_file(t.file.path));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Target& t = target();
  fuzz::write_file(t.file.path, std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::expect_clean_errors([&] { (void)format::validate_file(t.workload, t.file); });
  // A fresh reader per input: readers may remember files they opened (read_type: memory).
  const auto reader = format::make_reader(t.workload);
  for (std::uint64_t s = 0; s < t.file.num_samples; ++s)
    fuzz::expect_clean_errors([&] { (void)reader->read({&t.file.path, t.file.sample, t.file.num_samples, s, 0}); });
  return 0;
}
