#include "cli/app.hpp"

int main(int argc, char** argv) { return trainio::cli::main(argc, argv); }
