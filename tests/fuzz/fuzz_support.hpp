#pragma once
// What the fuzz targets share: a scratch folder of their own, writing the input where a parser
// will read it, seeding an empty corpus with a valid file that trainio generated, and the rule
// for what counts as a finding.
//
// A finding is what a user must never see: a crash, a sanitizer report, an allocation past
// -malloc_limit_mb, an exception other than trainio::Error (it would end the job with a stack
// trace or "terminate called"), or a trainio::Error of kind internal (a bug by its own words).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <unistd.h>

#include "util/error.hpp"

namespace trainio::fuzz {

// A folder for this process's files: $TMPDIR/trainio-fuzz-<pid>, made at first use.
inline const std::string& scratch_folder() {
  static const std::string folder = [] {
    const auto dir = std::filesystem::temp_directory_path() / ("trainio-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir.string();
  }();
  return folder;
}

inline void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The corpus folder libFuzzer was given (its first argument that is not a flag), when it exists
// and is empty: that is where a seed goes. Empty string otherwise.
inline std::string empty_corpus(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty() || arg[0] == '-') continue;
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec) && std::filesystem::is_empty(arg, ec)) return arg;
    return {};
  }
  return {};
}

inline void add_seed(const std::string& corpus, const std::string& name, std::string_view bytes) {
  if (!corpus.empty()) write_file(corpus + "/" + name, bytes);
}

// Runs `parse` on one input: trainio::Error of any kind but internal is the expected answer to
// bad bytes; everything else aborts, which libFuzzer reports with the input that caused it.
template <typename Parse>
void expect_clean_errors(Parse&& parse) {
  try {
    parse();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::internal) {
      std::fprintf(stderr, "fuzz: internal error: %s\n", e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an exception other than trainio::Error escaped: %s\n", e.what());
    std::abort();
  }
}

}  // namespace trainio::fuzz
