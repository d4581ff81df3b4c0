// Fuzz target: the NPY header parser (numpy's format.read_array_header_{1,2,3}_0 as trainio
// re-enacts it), on its own so that the fuzzer reaches its corners faster than through whole
// files. The NPY and NPZ dataset targets cover it again inside real files.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "format/numpy/npy.hpp"
#include "fuzz_support.hpp"

using namespace trainio;

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  const std::string corpus = fuzz::empty_corpus(*argc, *argv);
  if (corpus.empty()) return 0;
  const std::uint64_t shape[] = {2, 16, 16};
  fuzz::add_seed(corpus, "v1.npy", format::npy::header(config::ElementType::float32, shape));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean_errors([&] {
    std::string why;
    if (const auto h = format::npy::parse_header(bytes, &why)) (void)h->data_bytes();
  });
  return 0;
}
