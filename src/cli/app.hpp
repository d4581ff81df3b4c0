#pragma once

namespace trainio::cli {

// Parses the command line and runs the chosen subcommand; returns the exit code.
int main(int argc, char** argv);

}  // namespace trainio::cli
