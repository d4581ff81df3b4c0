#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include "storage/file.hpp"
#include "storage/mincore_trust.hpp"
#include "storage/page_residency.hpp"
#include "unit/temp_dir.hpp"

using namespace trainio;

namespace {

constexpr std::uint64_t kBytes = 1 << 20;

bool write_proc(const char* path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

// A file of kBytes owned by uid:gid, mode 0644, none of its pages in the page cache.
std::string evicted_file(const test::TempDir& dir, const std::string& name, uid_t uid, gid_t gid) {
  const std::string path = dir / name;
  storage::File f = storage::File::open(path, {.access = storage::Access::write_new});
  std::vector<unsigned char> data(kBytes, 0x5a);
  f.write_all(data.data(), data.size());
  f.fdatasync();
  f.drop_from_cache();
  f.close();
  REQUIRE(::chown(path.c_str(), uid, gid) == 0);
  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  return path;
}

// What the mincore probe tells a child that is root in a new user namespace mapping only this
// process's uid and gid (as `unshare -r` makes): -1 when user namespaces are unavailable here,
// else the errno of the probe, or 1000 + the resident pages when it gave an answer.
int probe_in_user_namespace(const std::string& path) {
  const std::string uid_map = "0 " + std::to_string(::geteuid()) + " 1";
  const std::string gid_map = "0 " + std::to_string(::getegid()) + " 1";
  const pid_t child = ::fork();
  if (child == 0) {
    if (::unshare(CLONE_NEWUSER) != 0 || !write_proc("/proc/self/setgroups", "deny") ||
        !write_proc("/proc/self/uid_map", uid_map) || !write_proc("/proc/self/gid_map", gid_map))
      ::_exit(255);
    storage::reread_mincore_caller();  // the parent may have read its own already
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) ::_exit(254);
    const storage::Residency r = storage::probe_residency_by_mincore(fd, 0, kBytes);
    // Exit codes carry 8 bits: 0 for no page resident, 1 for all, 2 for some; errno + 10.
    const std::uint64_t all = kBytes / storage::page_bytes();
    ::_exit(r.error != 0 ? 10 + r.error : r.resident_pages == 0 ? 0 : r.resident_pages == all ? 1 : 2);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) >= 254) return -1;
  const int code = WEXITSTATUS(status);
  return code >= 10 ? code - 10 : 1000 + code;
}

}  // namespace

TEST_CASE("root in a user namespace: mincore's answer for a file whose owner the namespace does not map is not "
          "taken as the truth") {
  if (::geteuid() != 0) {
    WARN("needs root (to give a file to another owner)");
    return;
  }
  test::TempDir dir("mincore-userns");
  const std::string foreign = evicted_file(dir, "foreign.bin", 12345, 12345);
  if (test::on_tmpfs(foreign)) {
    WARN("the test folder is on tmpfs, where nothing can be evicted: set TRAINIO_TEST_TMP to a disk folder");
    return;
  }
  const std::string own = evicted_file(dir, "own.bin", 0, 0);
  const int on_foreign = probe_in_user_namespace(foreign);
  if (on_foreign < 0) {
    WARN("user namespaces are unavailable here (unshare(CLONE_NEWUSER) failed): the namespace case is not run");
    return;
  }
  // Linux 5.0+ reports every page of the foreign file resident to this caller (none is): the
  // probe must refuse (EPERM), not pass that off as residency.
  CHECK(on_foreign == EPERM);
  // The file of the uid the namespace maps to its root: the caller owns it, and the kernel tells
  // the truth (nothing resident).
  CHECK(probe_in_user_namespace(own) == 1000);
}

TEST_CASE("id maps as /proc/self/uid_map writes them") {
  const auto identity = storage::parse_id_map("         0          0 4294967295\n");
  REQUIRE(identity);
  CHECK(storage::is_identity(*identity));
  CHECK(storage::maps_id(*identity, 12345));
  const auto userns = storage::parse_id_map("         0       1000          1\n         1     100000      65536\n");
  REQUIRE(userns);
  REQUIRE(userns->size() == 2);
  CHECK_FALSE(storage::is_identity(*userns));
  CHECK(storage::maps_id(*userns, 0));
  CHECK(storage::maps_id(*userns, 65536));
  CHECK_FALSE(storage::maps_id(*userns, 65537));
  CHECK(storage::parse_id_map("")->empty());  // a namespace whose map is not written yet maps nothing
  CHECK_FALSE(storage::parse_id_map("0 0\n"));
  CHECK_FALSE(storage::parse_id_map("0 x 1\n"));
  CHECK_FALSE(storage::parse_id_map("0 0 1 2\n"));
}

TEST_CASE("mincore is trusted only where the kernel tells this caller the truth") {
  const storage::IdMap identity{{0, 0, 4294967295u}};
  const storage::IdMap root_only{{0, 1000, 1}};  // unshare -r as uid 1000
  storage::MincoreCaller root{.euid = 0, .cap_fowner = true, .uids = identity, .gids = identity};
  storage::MincoreCaller user{.euid = 1000, .cap_fowner = false, .uids = identity, .gids = identity};
  storage::MincoreCaller fake_root{.euid = 0, .cap_fowner = true, .uids = root_only, .gids = root_only};
  const storage::MincoreFile others{.uid = 12345, .gid = 12345, .writable = false};
  // Root in the initial namespace: every file, without looking at it.
  CHECK(storage::mincore_truthful_for_all(root));
  CHECK(storage::mincore_truthful(root, others));
  // A user: its own files and the files it may write.
  CHECK_FALSE(storage::mincore_truthful_for_all(user));
  CHECK(storage::mincore_truthful(user, {.uid = 1000, .gid = 1000, .writable = false}));
  CHECK(storage::mincore_truthful(user, {.uid = 12345, .gid = 12345, .writable = true}));
  CHECK_FALSE(storage::mincore_truthful(user, others));
  // Root in a user namespace: euid 0 and CAP_FOWNER, but only over files whose owner and group
  // the map names. An unmapped owner shows as the overflow id (65534), which proves nothing.
  CHECK_FALSE(storage::mincore_truthful_for_all(fake_root));
  CHECK_FALSE(storage::mincore_truthful(fake_root, {.uid = 65534, .gid = 65534, .writable = false}));
  CHECK(storage::mincore_truthful(fake_root, {.uid = 0, .gid = 0, .writable = false}));
  CHECK(storage::mincore_truthful(fake_root, {.uid = 65534, .gid = 65534, .writable = true}));
  // A mapped owner with an unmapped group: CAP_FOWNER does not reach it, ownership would.
  storage::MincoreCaller wide = fake_root;
  wide.uids = {{0, 1000, 1}, {1, 100000, 65536}};
  CHECK(storage::mincore_truthful(wide, {.uid = 5, .gid = 5, .writable = false}) == false);
  wide.gids = wide.uids;
  CHECK(storage::mincore_truthful(wide, {.uid = 5, .gid = 5, .writable = false}));
  // Without CAP_FOWNER (a container that dropped it), root in the initial namespace is an owner
  // like any other.
  storage::MincoreCaller capless = root;
  capless.cap_fowner = false;
  CHECK_FALSE(storage::mincore_truthful_for_all(capless));
  CHECK_FALSE(storage::mincore_truthful(capless, others));
  CHECK(storage::mincore_truthful(capless, {.uid = 0, .gid = 0, .writable = false}));
}
