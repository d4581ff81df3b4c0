#pragma once
// File-system operations around the data: folders, renames, removals, whole small files.
// Checked and observed like storage::File.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainio::storage {

// Creates `path` and any missing parents (mkdir -p).
void make_dirs(const std::string& path);

// rename(2): atomically replaces `to`.
void rename_path(const std::string& from, const std::string& to);

// Makes data durable. folder_entries: fsync(2) of the folder, so renames and creations in it
// survive a crash. (Never syncfs: it waits for every dirty page of the file system, other jobs'
// included; files are synced one by one, storage/sync_queue.hpp.)
enum class SyncScope { folder_entries };
void sync_folder(const std::string& folder, SyncScope scope);

// unlink(2); a missing file is not an error.
void remove_file(const std::string& path);

// rmdir(2) of an empty folder; a missing or non-empty folder is left alone.
void remove_empty_dir(const std::string& path);

// Size of a regular file, nullopt when it does not exist (stat(2)).
std::optional<std::uint64_t> file_size(const std::string& path);

bool is_dir(const std::string& path);

// `path` with the symbolic links of the part that exists resolved, absolute and normalised
// (std::filesystem::weakly_canonical); the path as it is when that fails.
std::string resolved_path(const std::string& path);

// What stands at `path` when it is something other than a regular file ("a FIFO", "a folder",
// "a character device", ...), following links; nullopt for a regular file or nothing (stat(2)).
std::optional<std::string> irregular_file_kind(const std::string& path);

// For the error path of a read that failed: throws a dataset error naming what stands at `path`
// when it is not a regular file (a FIFO reads as empty, a folder fails with EISDIR), so the
// message says what is wrong rather than what the read met. Returns when it is a regular file.
void refuse_irregular_file(const std::string& path);

// Names in a folder (no "." or ".."), unsorted; empty when the folder does not exist.
std::vector<std::string> list_dir(const std::string& path);

// Calls `visit` with each name in a folder (no "." or "..") as the folder is read, without
// listing it in memory (a folder may hold millions of files), until `visit` returns false;
// returns false when it did. Nothing when the folder does not exist. `visit` may remove the
// entry it was given.
bool for_each_entry(const std::string& path, const std::function<bool(const std::string& name)>& visit);

// Reads a whole (small) file; nullopt when missing.
std::optional<std::string> read_small_file(const std::string& path);

// Writes `content` to `path` so that a crash leaves either the old file or the new one, never a
// half-written file: write a temporary sibling, fsync it, rename it over `path`, fsync the folder.
void write_file_atomic(const std::string& path, std::string_view content);

// Writes `content` to a temporary sibling and renames it over `path` (no fsync): a reader sees
// the old file, the new one, or nothing, never part of one. For generated data, where fsync per
// file would only slow generation down.
void write_file_replace(const std::string& path, std::string_view content);

// The file system holding `path` (statvfs(3)): bytes an unprivileged user may still write
// (f_bavail x f_frsize), and the block size files are allocated in (f_frsize).
struct FsSpace {
  std::uint64_t free_bytes = 0;
  std::uint64_t block_bytes = 0;
};
FsSpace fs_space(const std::string& path);

// "<dir>/.<name>.trainio-tmp": the in-progress name of a file being written. Hidden and
// recognisable, so interrupted writes are found and cleaned up, and never read as data.
std::string temp_path_for(const std::string& path);
inline constexpr std::string_view kTempSuffix = ".trainio-tmp";
// Removes the files of `folder` (not its subfolders') named as temp_path_for names them: what a
// process ended before it could commit or remove them left there.
void remove_temporaries_in(const std::string& folder);

}  // namespace trainio::storage
