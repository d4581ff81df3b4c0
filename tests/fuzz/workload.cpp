// Fuzz target: a workload file and command-line overrides, as `trainio run FILE KEY=VALUE...`
// reads them. The input is the YAML text, then, after a NUL byte, one override per line. A
// workload that loads must also load again from its resolved YAML (`trainio config` output) to
// the same values: what trainio prints as the workload is the workload.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "config/dump.hpp"
#include "config/load.hpp"
#include "config/shipped_workloads.hpp"
#include "fuzz_support.hpp"

using namespace trainio;

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  const std::string corpus = fuzz::empty_corpus(*argc, *argv);
  if (corpus.empty()) return 0;
  for (const auto& shipped : config::shipped_workloads()) fuzz::add_seed(corpus, shipped.name, shipped.yaml);
  fuzz::add_seed(corpus, "overrides", std::string("dataset:\n  format: hdf5\n") + '\0' +
                                          "reader.batch_size=8\n++workload.train.epochs=2\n~dataset.num_files_eval");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string yaml(input.substr(0, nul));
  std::vector<std::string> overrides;
  if (nul != std::string_view::npos) {
    std::string_view rest = input.substr(nul + 1);
    while (!rest.empty()) {
      const std::size_t eol = rest.find('\n');
      overrides.emplace_back(rest.substr(0, eol));
      rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    }
  }
  fuzz::expect_clean_errors([&] {
    const config::Workload w = config::load_text(yaml, "fuzz.yaml", "fuzz", overrides);
    const std::string resolved = config::to_yaml(w, false);
    const config::Workload again = config::load_text(resolved, "resolved.yaml", "fuzz");
    if (config::resolved_values(again) != config::resolved_values(w)) {
      std::fprintf(stderr, "fuzz: the resolved workload does not load to the same values:\n%s\n", resolved.c_str());
      std::abort();
    }
  });
  return 0;
}
