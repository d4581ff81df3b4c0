#pragma once
// reader.evict: emptying the page cache of the dataset before an epoch, so that the epoch
// measures the storage and not the memory of the clients. Every node evicts every file (any
// node may hold any file in its cache), the files shared out among the node's ranks.
//  - fadvise: fdatasync + posix_fadvise(DONTNEED) per file (effective on local and most
//    network file systems; a no-op on tmpfs);
//  - drop_caches: sync, then "3" into /proc/sys/vm/drop_caches on each node (root only;
//    machine-wide).

#include <string>
#include <vector>

#include "config/workload.hpp"
#include "mpi/comm.hpp"
#include "plan/layout.hpp"

namespace trainio::engine {

// Collective. No-op for reader.evict: none.
void evict_dataset(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm, plan::Split split);

// Collective: each rank evicts `paths` (fadvise), or one rank per node drops the whole cache.
void evict_files(const std::vector<std::string>& paths, config::Evict how, const mpi::Comm& comm);

}  // namespace trainio::engine
