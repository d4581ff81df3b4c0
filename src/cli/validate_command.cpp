#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "engine/together.hpp"
#include "engine/generate/validator.hpp"
#include "format/format.hpp"
#include "plan/layout.hpp"
#include "util/error.hpp"
#include "util/units.hpp"

namespace trainio::cli {

int validate_command(const ValidateCommand& cmd, int argc, char** argv) {
  return run_workload_command(
      argc, argv, cmd.log_level, cmd.words, [&](const mpi::Comm& comm, const config::Workload& w) {
        engine::together(comm, [&] {
          // Objects are not checked yet: saying "no dataset" of a complete one would mislead.
          if (w.storage.storage_type == config::StorageType::s3)
            throw usage_error(fmt::format("trainio validate: S3 datasets are not supported yet (storage.storage_type is "
                                          "s3, dataset.data_folder '{}')", w.dataset.data_folder),
                              "a run checks each object as it reads it (its size and first bytes), and generation "
                              "(workflow.generate_data=True) rewrites every object whose size is wrong");
          format::make_writer(w);  // the format is built
        });
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
