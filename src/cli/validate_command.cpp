#include <cstdio>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "engine/together.hpp"
#include "engine/validator.hpp"
#include "format/format.hpp"
#include "plan/layout.hpp"
#include "util/units.hpp"

namespace trainio::cli {

int validate_command(const ValidateCommand& cmd, int argc, char** argv) {
  return run_workload_command(
      argc, argv, cmd.log_level, cmd.words, [&](const mpi::Comm& comm, const config::Workload& w) {
        engine::together(comm, [&] { format::make_writer(w); });  // the format is built
        const plan::DatasetLayout layout(w);
        const auto report = engine::validate_dataset(w, layout, comm, cmd.progress);
        const bool good = report.problem_count == 0;
        if (!comm.is_root()) return good ? 0 : 1;
        for (const auto& p : report.problems) std::printf("%s\n", p.c_str());
        if (report.problem_count > report.problems.size())
          std::printf("... and %s more problems (the first %zu are listed)\n",
                      util::format_count(report.problem_count - report.problems.size()).c_str(), report.problems.size());
        std::printf("checked %s files in %s: %s\n", util::format_count(report.files_checked).c_str(), layout.root().c_str(),
                    good ? "all good" : (util::format_count(report.problem_count) + " problems").c_str());
        return good ? 0 : 1;
      });
}

}  // namespace trainio::cli
