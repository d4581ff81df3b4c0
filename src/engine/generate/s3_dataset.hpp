#pragma once
// A dataset in an S3 bucket (storage_type: s3): generated as DLIO generates it through
// s3torchconnector — one object per file, files round robin over ranks, each object a multipart
// upload of 8 MiB parts, complete under its key only once whole — checked before a run reads it,
// and removed. trainio's marker object (<data_folder>/.trainio-dataset.json) says which workload
// made the objects and whether generation finished, as the marker file does on a file system; an
// interrupted generation resumes, keeping the objects whose size (HEAD) is right.
//
// Keys: DLIO passes the whole "s3://bucket/prefix/train/..." URI as the object key (a DLIO bug:
// its objects' keys begin with "s3://bucket/"); trainio uses the key the URI names,
// "prefix/train/...".

#include "config/workload.hpp"
#include "engine/generate/generator.hpp"
#include "metrics/run_record.hpp"
#include "mpi/comm.hpp"
#include "plan/layout.hpp"

namespace trainio::engine {

// Collective.
metrics::GenerateRecord generate_s3_dataset(const config::Workload& w, const plan::DatasetLayout& layout,
                                            const mpi::Comm& comm, const GenerateOptions& options);
void check_s3_dataset(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm);
void remove_s3_dataset(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm);

}  // namespace trainio::engine
