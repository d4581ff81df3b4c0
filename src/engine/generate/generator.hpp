#pragma once
// Parallel dataset generation: file k of the layout is written by rank k % ranks, to a temporary
// name that is renamed when complete. Files that are already complete and belong to the same
// dataset are kept, so an interrupted generation resumes where it stopped.

#include <functional>
#include <vector>

#include "config/workload.hpp"
#include "format/format.hpp"
#include "metrics/run_record.hpp"
#include "mpi/comm.hpp"
#include "plan/generation.hpp"
#include "plan/layout.hpp"

namespace trainio::engine {

struct GenerateOptions {
  bool force = false;     // adopt a non-empty folder that is not a trainio dataset
  bool progress = true;   // show progress on rank 0
};

// Collective. Throws on any rank's failure (see together.hpp).
metrics::GenerateRecord generate_dataset(const config::Workload& w, const plan::DatasetLayout& layout,
                                         const mpi::Comm& comm, const GenerateOptions& options);

// Collective: checks, before a run reads it, that the data folder holds the workload's dataset.
void check_dataset(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm);

// Collective: deletes the dataset's files (dataset.keep_files: false). Only in a trainio folder.
void remove_dataset(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm);

// Collective: this rank's part of generation, with progress: each file of `mine` is kept (when
// keep(file) says it is complete already) or written, then make_durable() waits until what was
// written is on stable storage (none: it is once written, as an object store's uploads are);
// counts, the times to each point and I/O go into `record`.
void generate_files(const plan::DatasetLayout& layout, const plan::FileShare& mine, const mpi::Comm& comm,
                    const GenerateOptions& options, metrics::GenerateRecord& record,
                    const std::function<bool(const plan::DataFile&)>& keep,
                    const std::function<void(const plan::DataFile&)>& write,
                    const std::function<void()>& make_durable = {});

// Writes one data file as the generator does: under a temporary name, renamed into place when
// whole (through the writer's sync queue, if it has one), removed when writing fails.
// `remove_leftover`: a temporary of an interrupted run may be there.
void write_data_file(format::FileWriter& writer, const plan::DataFile& file, format::ContentSource& content,
                     bool remove_leftover = true);

}  // namespace trainio::engine
