#include "engine/generate/generator.hpp"
#include "engine/generate/s3_dataset.hpp"

#include <fmt/format.h>
#include <array>
#include <set>
#include <spdlog/spdlog.h>

#include "engine/content.hpp"
#include "engine/generate/dataset_marker.hpp"
#include "engine/overlap_thread.hpp"
#include "engine/progress.hpp"
#include "engine/generate/shared_writing.hpp"
#include "engine/together.hpp"
#include "format/format.hpp"
#include "metrics/io_recorder.hpp"
#include "plan/fingerprint.hpp"
#include "plan/generation.hpp"
#include "storage/file.hpp"
#include "storage/fs.hpp"
#include "storage/new_file.hpp"
#include "storage/io_observer.hpp"
#include "storage/sync_queue.hpp"
#include "util/checked.hpp"
#include "util/clock.hpp"
#include "util/stop_request.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"
#include "util/rng.hpp"
#include "util/units.hpp"

namespace trainio::engine {

namespace {

// A signal's stop, between two files: the files written so far are whole and kept, the dataset
// is not marked complete, and a later generation resumes from them.
void stop_if_asked(const metrics::GenerateRecord& record) {
  if (const int signal = util::stop_signal(); signal != 0)
    throw stopped_error(fmt::format("{} stopped the generation after {} files written ({} kept): they are whole, and "
                                    "generating again resumes from them",
                                    util::signal_name(signal), record.files_written, record.files_kept));
}

// Data files and their companions (indexes) carry "_of_" in their names.
bool looks_like_dataset_file(const std::string& name) {
  return name.find("_of_") != std::string::npos || name.ends_with(storage::kTempSuffix);
}

// Removes the dataset files of `dir`, and with `depth` > 0 of its subfolders (the layout's
// numbered subfolders), as the folders are read: no list, since there may be millions.
std::uint64_t remove_dataset_files_in(const std::string& dir, int depth) {
  std::uint64_t removed = 0;
  storage::for_each_entry(dir, [&](const std::string& name) {
    const std::string path = util::join(dir, name);
    if (storage::is_dir(path)) {
      if (depth > 0) removed += remove_dataset_files_in(path, depth - 1);
    } else if (looks_like_dataset_file(name)) {
      storage::remove_file(path);
      ++removed;
    }
    return true;
  });
  return removed;
}

// A trainio folder whose dataset changed: remove the old data files (and any interrupted
// temporaries) so no file of the old dataset can pass for one of the new.
std::uint64_t remove_stale_files(const std::string& root) {
  std::uint64_t removed = 0;
  for (const char* split : {"train", "valid", "index/train", "index/valid"})
    removed += remove_dataset_files_in(util::join(root, split), 1);
  return removed;
}

// What generation may assume about files already in the folder.
enum class Existing : std::int64_t {
  untrusted = 0,   // write every file (a new folder, or one whose old files were removed)
  complete = 1,    // a finished dataset of these settings: keep files of the right size
  interrupted = 2, // an unfinished one: keep complete files, clear temporaries of the rest
  foreign = 3,     // not trainio's (--force): write every file, clearing any temporary first
};

// Whether a file's temporary may be there already: otherwise creating it needs no unlink first
// (a system call per file that small-file generation on a fast file system notices).
bool temporaries_possible(Existing existing) { return existing != Existing::untrusted; }

// Rank 0 readies the folder and says what the files in it are worth.
Existing prepare_folder(const config::Workload& w, const plan::DatasetLayout& layout, bool force) {
  const std::string& root = layout.root();
  const DataFolder folder = inspect_data_folder(root);
  const plan::Fingerprint fp = plan::dataset_fingerprint(w);
  Existing existing = Existing::untrusted;
  switch (folder.state) {
    case DataFolder::State::missing:
    case DataFolder::State::empty:
      break;
    case DataFolder::State::foreign:
      if (!force)
        throw usage_error(
            fmt::format("the data folder '{}' is not empty and is not a trainio dataset (it has no {})", root, kMarkerName),
            "choose an empty or new dataset.data_folder, or pass --force to generate into it anyway "
            "(files with the dataset's names are replaced; nothing else is touched)");
      spdlog::warn("--force: generating into '{}', which was not a trainio dataset", root);
      existing = Existing::foreign;
      break;
    case DataFolder::State::trainio:
      if (!folder.fingerprint.empty() && !plan::first_difference(folder.fingerprint, fp))
        existing = folder.complete ? Existing::complete : Existing::interrupted;
      if (existing == Existing::untrusted) {
        const auto removed = remove_stale_files(root);
        spdlog::info("the dataset in '{}' was generated for different settings; removed its {} files", root, removed);
      }
      break;
  }
  storage::make_dirs(root);
  for (const auto& sub : layout.folders()) storage::make_dirs(util::join(root, sub));
  write_marker(root, fp, false);
  return existing;
}

bool complete_already(const format::FileWriter& writer, const plan::DataFile& file, Existing existing) {
  // A file under its final name was renamed there complete, or written there in one call
  // (FileWriter::writes_in_one_call): its size says it is complete.
  if (existing == Existing::untrusted || existing == Existing::foreign) return false;
  const auto size = storage::file_size(file.path);
  if (!size) return false;
  const auto expected = writer.expected_size(file);
  return !expected || *size == *expected;
}

// Bytes a file will take: its exact size when the format knows it in advance, else (compressed
// files) its sample data, divided by the target ratio for compressible content.
std::uint64_t bytes_to_write(const config::Workload& w, const format::FileWriter& writer, const plan::DataFile& file) {
  if (const auto size = writer.expected_size(file)) return *size;
  const auto data = file.data_bytes();
  if (w.dataset.data_content == config::DataContent::random) return data;
  return static_cast<std::uint64_t>(static_cast<double>(data) / std::max(1.0, w.dataset.compression_ratio));
}

// The nearest folder on `path` that exists: a rank on another host may not see the data folder
// rank 0 made (node-local storage) before it writes its first file.
std::string existing_folder(std::string path) {
  while (!storage::is_dir(path)) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
  return path;
}

// Collective, before any data file is written: refuses a dataset whose files still to write
// (files a resumed generation keeps are not counted) do not fit the free space of the data
// folder's file system. Each host compares its ranks' bytes with the free space it sees: on a
// shared file system every host sees the same space, so this catches a dataset that cannot fit
// on any host, and a node-local folder is judged by its own disk.
void check_free_space(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm,
                      const format::FileWriter& writer, Existing existing, const plan::FileShare& mine) {
  std::uint64_t bytes = 0, files = 0;
  together(comm, [&] {
    // Files take whole blocks: 1 KiB files on 4 KiB blocks take 4 KiB each.
    const std::uint64_t block = std::max<std::uint64_t>(1, storage::fs_space(existing_folder(layout.root())).block_bytes);
    for (std::uint64_t i = 0; i < mine.size(); ++i) {
      const plan::DataFile file = layout.file_by_global_index(mine[i]);
      if (complete_already(writer, file, existing)) continue;
      const std::uint64_t size = bytes_to_write(w, writer, file);
      bytes = util::saturating_add(bytes, util::saturating_add(size, (block - size % block) % block));
      ++files;
    }
  });
  std::vector<std::uint64_t> per_host(static_cast<std::size_t>(comm.num_hosts()) * 2, 0);
  per_host[static_cast<std::size_t>(comm.host_index()) * 2] = bytes;
  per_host[static_cast<std::size_t>(comm.host_index()) * 2 + 1] = files;
  // The data is below 2^63 bytes (config::check_sizes): summed over ranks, headers included, it
  // stays below 2^64.
  per_host = comm.sum(per_host);
  together(comm, [&] {
    if (comm.node_rank() != 0) return;
    const std::uint64_t needed = per_host[static_cast<std::size_t>(comm.host_index()) * 2];
    const std::uint64_t count = per_host[static_cast<std::size_t>(comm.host_index()) * 2 + 1];
    const std::uint64_t available = storage::fs_space(existing_folder(layout.root())).free_bytes;
    if (needed <= available) return;
    throw io_error(
        fmt::format("the dataset does not fit: its {} files still to write need {} bytes ({}), but the file system of "
                    "'{}' has {} bytes ({}) free",
                    count, needed, util::format_bytes(static_cast<double>(needed)), layout.root(), available,
                    util::format_bytes(static_cast<double>(available))),
        "free space there, point dataset.data_folder (or storage.storage_root) at a larger file system, or make the "
        "dataset smaller (dataset.num_files_train, num_samples_per_file, record_length_bytes); on a file system "
        "that compresses or reports no free space, set dataset.check_free_space=false");
  });
}


// The writer's buffers and the content's random pool made before generation's clock starts
// (format::FileWriter::prepare): first touches of memory cost 13 us a page on some VMs.
void ready_to_write(const config::Workload& w, format::FileWriter& writer, const plan::DataFile& first) {
  writer.prepare(first);
  std::array<char, engine::RandomContent::kBlock> block{};
  std::uint32_t crc = 0;
  file_content(w, first)->fill_crc32(block.data(), block.size(), crc);
}

void write_one(const config::Workload& w, format::FileWriter& writer, const plan::DataFile& file, Existing existing) {
  const auto content = file_content(w, file);
  write_data_file(writer, file, *content, temporaries_possible(existing));
}

// The marker says "complete" only once every rank's files are on stable storage: after a node
// crash, a complete marker must not cover short or zero-filled files. Each rank has made its
// own files durable (storage::SyncQueue) when it gets here; rank 0 writes the marker durably.
void mark_complete(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm) {
  together(comm, [&] {
    if (comm.is_root()) write_marker(layout.root(), plan::dataset_fingerprint(w), true);
  });
}

metrics::GenerateRecord generate_shared(const config::Workload& w, const plan::DatasetLayout& layout,
                                        const mpi::Comm& comm, format::FileWriter& writer, Existing existing,
                                        const GenerateOptions& options, storage::SyncQueue& sync,
                                        metrics::GenerateRecord& record) {
  metrics::IoRecorder io;
  storage::ScopedObserver observe(&io);
  const std::int64_t start = util::now_ns();
  std::uint64_t bytes = 0;
  for (std::uint64_t k = 0; k < layout.total_files(); ++k) bytes += layout.file_by_global_index(k).data_bytes();
  Progress progress("generate", "generate (shared files)", layout.total_files(), bytes, 1, options.progress && comm.is_root());
  MpiSharedWriting shared(comm);
  std::vector<std::string> to_publish;  // under their temporary names until durable (fewer than ranks)
  for (std::uint64_t k = 0; k < layout.total_files(); ++k) {
    const plan::DataFile file = layout.file_by_global_index(k);
    const std::string temp = storage::temp_path_for(file.path);
    std::int64_t keep = 0;
    together(comm, [&] {
      stop_if_asked(record);
      if (!comm.is_root()) return;
      keep = complete_already(writer, file, existing) ? 1 : 0;
      if (!keep) storage::remove_file(temp);
    });
    if (comm.broadcast(keep)) {
      if (comm.is_root()) ++record.files_kept;
    } else {
      together(comm, [&] {
        const auto content = file_content(w, file);
        const std::int64_t started = util::now_ns();
        const std::uint64_t written = writer.write_shared(file, temp, shared, *content);
        // MPI-IO moved the bytes, not trainio's storage layer: this rank's share is recorded here.
        storage::observe_path_op(storage::Op::write, temp, started, written);
      });
      to_publish.push_back(file.path);
      if (comm.is_root()) ++record.files_written;
    }
    progress.advance(1, file.data_bytes());
  }
  progress.finish();
  record.seconds = util::ns_to_s(util::now_ns() - start);
  // Each rank syncs every file it wrote part of (on a parallel file system its own client holds
  // its part), and rank 0 its indexes; then rank 0 renames the files into place.
  together(comm, [&] {
    for (const auto& path : to_publish) {
      storage::File f = storage::File::open(storage::temp_path_for(path));
      f.fdatasync();
      f.close();
    }
    sync.finish();
  });
  together(comm, [&] {
    if (!comm.is_root()) return;
    std::set<std::string> folders;
    for (const auto& path : to_publish) {
      storage::rename_path(storage::temp_path_for(path), path);
      folders.insert(util::parent_of(path));
    }
    for (const auto& folder : folders) storage::sync_folder(folder, storage::SyncScope::folder_entries);
  });
  record.durable_seconds = util::ns_to_s(util::now_ns() - start);
  record.io = io;
  mark_complete(w, layout, comm);
  return record;
}

}  // namespace

metrics::GenerateRecord generate_dataset(const config::Workload& w, const plan::DatasetLayout& layout,
                                         const mpi::Comm& comm, const GenerateOptions& options) {
  if (w.storage.storage_type == config::StorageType::s3) return generate_s3_dataset(w, layout, comm, options);
  metrics::GenerateRecord record;
  record.ran = true;
  std::int64_t mode = 0;
  together(comm, [&] {
    if (comm.is_root()) mode = static_cast<std::int64_t>(prepare_folder(w, layout, options.force));
  });
  const auto existing = static_cast<Existing>(comm.broadcast(mode));

  // Generates a file's next piece of content while the last one is written, or after it where
  // that is faster, as the files written so far measure (format::OverlapChoice).
  OverlapThread beside;
  const auto writer = format::make_writer(w);
  writer->generate_beside(&beside);
  // Each file (and index) is made durable before it takes its name, on threads of its own.
  storage::SyncQueue sync;
  writer->commit_through(&sync);
  // Fewer files than ranks: ranks write each file together (collective MPI-IO, parallel HDF5)
  // when the format allows it, as DLIO does; otherwise some ranks simply have nothing to write.
  const bool shared =
      writer->writes_shared() && comm.size() > 1 && layout.total_files() < static_cast<std::uint64_t>(comm.size());
  plan::FileShare mine;
  if (!shared) mine = plan::FileShare(layout, comm.rank(), comm.size());
  else if (comm.is_root()) mine = plan::FileShare(layout, 0, 1);  // rank 0 counts the shared files
  if (w.dataset.check_free_space) check_free_space(w, layout, comm, *writer, existing, mine);
  if (shared) return generate_shared(w, layout, comm, *writer, existing, options, sync, record);
  if (mine.size() > 0) ready_to_write(w, *writer, layout.file_by_global_index(mine[0]));
  generate_files(layout, mine, comm, options, record,
                 [&](const plan::DataFile& file) {
                   if (!complete_already(*writer, file, existing)) return false;
                   if (existing == Existing::interrupted) storage::remove_file(storage::temp_path_for(file.path));
                   return true;
                 },
                 [&](const plan::DataFile& file) {
                   try {
                     const std::int64_t start = util::now_ns();
                     write_one(w, *writer, file, existing);
                     beside.choice().record(file.data_bytes(), util::now_ns() - start);
                   } catch (Error& e) {
                     e.with_hint("check free space and permissions of the data folder; re-running resumes");
                     throw;
                   }
                 },
                 [&] { sync.finish(); });
  mark_complete(w, layout, comm);
  return record;
}

void check_dataset(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm) {
  if (w.storage.storage_type == config::StorageType::s3) return check_s3_dataset(w, layout, comm);
  together(comm, [&] {
    if (comm.is_root()) require_dataset(w, layout.root(), inspect_data_folder(layout.root()));
  });
}

void remove_dataset(const config::Workload& w, const plan::DatasetLayout& layout, const mpi::Comm& comm) {
  if (w.storage.storage_type == config::StorageType::s3) return remove_s3_dataset(w, layout, comm);
  std::int64_t ours = 0;
  together(comm, [&] {
    if (comm.is_root()) ours = inspect_data_folder(layout.root()).state == DataFolder::State::trainio;
  });
  if (!comm.broadcast(ours)) {
    if (comm.is_root()) spdlog::warn("keep_files is false, but '{}' is not a trainio dataset: left in place", layout.root());
    return;
  }
  together(comm, [&] {
    const auto writer = format::make_writer(w);
    const std::uint64_t total = layout.total_files();
    for (std::uint64_t k = static_cast<std::uint64_t>(comm.rank()); k < total; k += static_cast<std::uint64_t>(comm.size())) {
      const plan::DataFile file = layout.file_by_global_index(k);
      storage::remove_file(file.path);
      for (const auto& companion : writer->companions(file)) storage::remove_file(companion);
    }
  });
  together(comm, [&] {
    if (!comm.is_root()) return;
    const std::string& root = layout.root();
    storage::remove_file(util::join(root, kMarkerName));
    auto folders = layout.folders();
    for (auto it = folders.rbegin(); it != folders.rend(); ++it) storage::remove_empty_dir(util::join(root, *it));
    storage::remove_empty_dir(root);
  });
}

void generate_files(const plan::DatasetLayout& layout, const plan::FileShare& mine, const mpi::Comm& comm,
                    const GenerateOptions& options, metrics::GenerateRecord& record,
                    const std::function<bool(const plan::DataFile&)>& keep,
                    const std::function<void(const plan::DataFile&)>& write,
                    const std::function<void()>& make_durable) {
  std::uint64_t my_bytes = 0;
  for (std::uint64_t i = 0; i < mine.size(); ++i) my_bytes += layout.file_by_global_index(mine[i]).data_bytes();
  metrics::IoRecorder io;
  const std::int64_t start = util::now_ns();
  together(comm, [&] {
    storage::ScopedObserver observe(&io);
    Progress progress("generate", "generate", mine.size(), my_bytes, comm.size(), options.progress && comm.is_root());
    for (std::uint64_t i = 0; i < mine.size(); ++i) {
      stop_if_asked(record);
      const plan::DataFile file = layout.file_by_global_index(mine[i]);
      if (keep(file)) {
        ++record.files_kept;
      } else {
        write(file);
        ++record.files_written;
      }
      progress.advance(1, file.data_bytes());
    }
    progress.finish();
    record.seconds = util::ns_to_s(util::now_ns() - start);
    record.durable_seconds = record.seconds;
    if (make_durable) {
      make_durable();
      record.durable_seconds = util::ns_to_s(util::now_ns() - start);
    }
  });
  record.io = io;
}

void write_data_file(format::FileWriter& writer, const plan::DataFile& file, format::ContentSource& content,
                     bool remove_leftover) {
  // Files written in one call go under their final name: one at its expected size is complete
  // (complete_already), one cut short by a crash is rewritten when generation resumes, and one
  // whose write fails is removed (NewFile). Others are renamed into place once complete.
  const bool in_place = writer.writes_in_one_call(file);
  if (in_place && remove_leftover) storage::remove_file(storage::temp_path_for(file.path));  // an earlier run's
  storage::NewFile out(file.path, {.in_place = in_place, .remove_leftover = remove_leftover,
                                   .opened_by_library = writer.writes_by_name(), .sync = writer.sync_queue()});
  writer.write(file, out, content);
  out.commit();
}

}  // namespace trainio::engine
