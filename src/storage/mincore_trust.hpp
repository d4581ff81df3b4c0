#pragma once
// Whether mincore(2) tells this process the truth about a file's pages. Since Linux 5.0
// (mm/mincore.c, can_do_mincore) it reports every page of a file mapping resident unless the
// caller owns the file, holds CAP_FOWNER over it, or may write it. Root in a user namespace
// (rootless containers, Apptainer --fakeroot, `unshare -r`) holds its capabilities only over
// files whose owner and group the namespace maps: euid 0 alone proves nothing. So the decision
// takes the process's id maps and capabilities, and each file's owner and write access.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainio::storage {

// One line of /proc/<pid>/uid_map or gid_map: ids [inside, inside + count) of the namespace are
// ids [outside, outside + count) of its parent.
struct IdRange {
  std::uint32_t inside = 0, outside = 0, count = 0;
};
using IdMap = std::vector<IdRange>;
// nullopt when the text is not such a map.
std::optional<IdMap> parse_id_map(std::string_view text);
// The initial namespace's map ("0 0 4294967295"): every id is itself.
bool is_identity(const IdMap& map);
bool maps_id(const IdMap& map, std::uint32_t id);

struct MincoreCaller {
  std::uint32_t euid = 0;
  bool cap_fowner = false;  // effective, in the caller's namespace
  IdMap uids, gids;
  // What stat() shows for an owner the namespace does not map (/proc/sys/kernel/overflowuid).
  std::uint32_t overflow_uid = 65534, overflow_gid = 65534;
};
struct MincoreFile {
  std::uint32_t uid = 0, gid = 0;  // as stat() shows them in the caller's namespace
  bool writable = false;           // the caller may write it (mode, ACLs, capabilities, mount)
};

// CAP_FOWNER in the initial namespace: every file's residency is told truthfully, and no file
// needs looking at (the probe costs no extra system call).
bool mincore_truthful_for_all(const MincoreCaller& c);
bool mincore_truthful(const MincoreCaller& c, const MincoreFile& f);

// This process, read once from /proc/self (uid_map, gid_map, status): a process keeps its user
// namespace and capabilities for its life.
const MincoreCaller& mincore_caller();
// Reads them again (tests: a child that entered a user namespace after the first read).
void reread_mincore_caller();
// An open file's owner (fstat) and write access (faccessat on /proc/self/fd/N, which asks the
// kernel's own permission check).
MincoreFile mincore_file(int fd);
// For messages about hidden residency: how this process stands ("root in a user namespace whose
// uid map is '0 1000 1'"), or empty when it is in the initial namespace.
std::string user_namespace_note();

}  // namespace trainio::storage
