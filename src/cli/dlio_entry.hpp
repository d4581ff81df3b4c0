#pragma once
// trainio started under DLIO's name: `dlio_benchmark workload=NAME ++workload.k=v ...` as
// MLPerf Storage's mlpstorage (and DLIO's own users) launch it. The command line is Hydra's; it
// is translated into a `trainio run` of the same workload.

#include <functional>
#include <string>
#include <vector>

namespace trainio::cli {

// True when argv[0]'s file name is dlio_benchmark (a link or copy of trainio under that name).
bool invoked_as_dlio(const char* argv0);

// DLIO's command line as a trainio run.
struct DlioArgs {
  std::vector<std::string> words;      // the workload (a file under --config-dir, else its name), then overrides
  std::string output;                  // ++hydra.run.dir: the results folder (empty: trainio's default)
  std::string hydra_subdir = ".hydra"; // ++hydra.output_subdir (empty for Hydra's null: no Hydra files)
  std::vector<std::string> notes;      // Hydra settings accepted without effect
  bool help = false;                   // --help / -h
};

// `args` are the words after the program name. `exists` says whether a file exists (tests replace
// it). Throws a usage error for what DLIO's entry point would not accept either, or what trainio
// does not support of Hydra's command line (multirun, --cfg, ...).
DlioArgs translate_dlio_args(const std::vector<std::string>& args,
                             const std::function<bool(const std::string&)>& exists);

// The whole program under DLIO's name: translates, then runs like `trainio run`.
int dlio_main(int argc, char** argv);

}  // namespace trainio::cli
