#include "cli/app.hpp"
#include "cli/dlio_entry.hpp"

int main(int argc, char** argv) {
  // Under DLIO's name (a link called dlio_benchmark), trainio takes DLIO's command line.
  if (argc > 0 && trainio::cli::invoked_as_dlio(argv[0])) return trainio::cli::dlio_main(argc, argv);
  return trainio::cli::main(argc, argv);
}
