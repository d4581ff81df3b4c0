// Fuzz target: the dataset marker (<data folder>/.trainio-dataset.json) that decides whether
// trainio may write into, resume or delete a folder. Whatever the marker holds, inspecting the
// folder answers (a damaged marker is reported as damaged), never crashes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/load.hpp"
#include "engine/generate/dataset_marker.hpp"
#include "fuzz_support.hpp"
#include "plan/fingerprint.hpp"

using namespace trainio;

namespace {
const std::string& folder() {
  static const std::string f = [] {
    const std::string path = fuzz::scratch_folder() + "/data";
    std::filesystem::create_directories(path);
    return path;
  }();
  return f;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  const std::string corpus = fuzz::empty_corpus(*argc, *argv);
  if (corpus.empty()) return 0;
  const auto w = config::load_text("dataset:\n  format: npz\n", "fuzz.yaml", "fuzz");
  engine::write_marker(folder(), plan::dataset_fingerprint(w), true);
  fuzz::add_seed(corpus, "marker.json", fuzz::read_file(folder() + "/" + engine::kMarkerName));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::write_file(folder() + "/" + engine::kMarkerName, std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::expect_clean_errors([&] { (void)engine::inspect_data_folder(folder()); });
  return 0;
}
