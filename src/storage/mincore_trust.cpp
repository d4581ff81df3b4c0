#include "storage/mincore_trust.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace trainio::storage {

namespace {

constexpr std::uint32_t kAllIds = 4294967295u;
constexpr unsigned kCapFowner = 3;  // linux/capability.h

std::string read_text(const char* path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool parse_u32(std::string_view text, std::uint32_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// The effective capability set's bit `cap`, from /proc/self/status's "CapEff:\t<hex>" line.
bool has_capability(const std::string& status, unsigned cap) {
  const auto at = status.find("CapEff:");
  if (at == std::string::npos) return false;
  std::uint64_t bits = 0;
  const char* p = status.data() + at + 7;
  const char* end = status.data() + status.size();
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  if (std::from_chars(p, end, bits, 16).ec != std::errc()) return false;
  return (bits >> cap) & 1u;
}

std::uint32_t overflow_id(const char* path) {
  std::uint32_t id = 65534;
  std::string text = read_text(path);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return parse_u32(text, id) ? id : 65534;
}

// An id stat() shows that the namespace maps: the overflow id stands for every unmapped owner, so
// outside the initial namespace it proves nothing and counts as unmapped.
bool mapped_owner(const IdMap& map, std::uint32_t id, std::uint32_t overflow) {
  return is_identity(map) || (id != overflow && maps_id(map, id));
}

}  // namespace

std::optional<IdMap> parse_id_map(std::string_view text) {
  IdMap map;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    std::uint32_t v[3];
    int n = 0;
    while (!line.empty()) {
      const auto start = line.find_first_not_of(" \t");
      if (start == std::string_view::npos) break;
      line.remove_prefix(start);
      const auto stop = std::min(line.find_first_of(" \t"), line.size());
      if (n == 3 || !parse_u32(line.substr(0, stop), v[n++])) return std::nullopt;
      line.remove_prefix(stop);
    }
    if (n == 0) continue;
    if (n != 3) return std::nullopt;
    map.push_back({v[0], v[1], v[2]});
  }
  return map;
}

bool is_identity(const IdMap& map) {
  return map.size() == 1 && map[0].inside == 0 && map[0].outside == 0 && map[0].count == kAllIds;
}

bool maps_id(const IdMap& map, std::uint32_t id) {
  for (const IdRange& r : map)
    if (id >= r.inside && id - r.inside < r.count) return true;
  return false;
}

bool mincore_truthful_for_all(const MincoreCaller& c) {
  return c.cap_fowner && is_identity(c.uids) && is_identity(c.gids);
}

bool mincore_truthful(const MincoreCaller& c, const MincoreFile& f) {
  if (mincore_truthful_for_all(c) || f.writable) return true;
  const bool owner_mapped = mapped_owner(c.uids, f.uid, c.overflow_uid);
  if (owner_mapped && f.uid == c.euid) return true;  // the owner
  return c.cap_fowner && owner_mapped && mapped_owner(c.gids, f.gid, c.overflow_gid);
}

namespace {

MincoreCaller read_caller() {
  MincoreCaller c;
  c.euid = ::geteuid();
  c.cap_fowner = has_capability(read_text("/proc/self/status"), kCapFowner);
  // Without /proc the maps are unknown: an empty map maps nothing, so nothing is trusted for all.
  c.uids = parse_id_map(read_text("/proc/self/uid_map")).value_or(IdMap{});
  c.gids = parse_id_map(read_text("/proc/self/gid_map")).value_or(IdMap{});
  c.overflow_uid = overflow_id("/proc/sys/kernel/overflowuid");
  c.overflow_gid = overflow_id("/proc/sys/kernel/overflowgid");
  return c;
}

MincoreCaller& cached_caller() {
  static MincoreCaller caller = read_caller();
  return caller;
}

}  // namespace

const MincoreCaller& mincore_caller() { return cached_caller(); }

void reread_mincore_caller() { cached_caller() = read_caller(); }

MincoreFile mincore_file(int fd) {
  MincoreFile f;
  struct stat st;
  if (::fstat(fd, &st) != 0) return f;  // unknown owner, not writable: not trusted
  f.uid = st.st_uid;
  f.gid = st.st_gid;
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  f.writable = ::faccessat(AT_FDCWD, link.c_str(), W_OK, 0) == 0;
  return f;
}

std::string user_namespace_note() {
  const MincoreCaller& c = mincore_caller();
  if (is_identity(c.uids)) return {};
  std::string map;
  for (const IdRange& r : c.uids)
    map += (map.empty() ? "" : ", ") + std::to_string(r.inside) + " " + std::to_string(r.outside) + " " +
           std::to_string(r.count);
  return (c.euid == 0 ? "root in a user namespace whose uid map is '" : "in a user namespace whose uid map is '") +
         map + "'";
}

}  // namespace trainio::storage
