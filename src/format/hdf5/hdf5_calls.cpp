#include "format/hdf5/hdf5_calls.hpp"

#include <cstring>

namespace trainio::format {

using storage::DriverCall;
using Kind = Hdf5Step::Kind;

std::optional<std::vector<Hdf5Step>> translate_hdf5_calls(const storage::DriverRecording& r, const Hdf5Translation& t) {
  std::vector<Hdf5Step> steps;
  bool probed = false, opened = false, named = false;
  std::uint64_t metadata_at = 0;
  for (const DriverCall& c : r.calls) {
    Hdf5Step s;
    switch (c.kind) {
      case DriverCall::Kind::open_missing:
        if (!t.writes || probed || opened) return std::nullopt;
        probed = true;
        s.kind = Kind::probe;
        break;
      case DriverCall::Kind::open:
        if (opened || c.create != t.writes) return std::nullopt;  // one file per recording
        opened = true;
        s.kind = t.writes ? Kind::create : Kind::open;
        break;
      case DriverCall::Kind::lock:
        s.kind = Kind::lock;
        s.exclusive = c.exclusive;
        break;
      case DriverCall::Kind::unlock: s.kind = Kind::unlock; break;
      case DriverCall::Kind::close: s.kind = Kind::close; break;
      case DriverCall::Kind::truncate:
        if (!t.writes) return std::nullopt;
        s.kind = Kind::truncate;
        s.offset = c.offset;
        break;
      case DriverCall::Kind::write:
        if (!t.writes) return std::nullopt;
        [[fallthrough]];
      case DriverCall::Kind::read:
        if (!named && t.names_file_before(c)) {
          if (!opened) return std::nullopt;
          steps.push_back({.kind = Kind::path_stat});
          named = true;
        }
        if (!opened) return std::nullopt;
        s.source = metadata_at;
        if (c.type != H5FD_MEM_DRAW) metadata_at += c.size;  // the driver kept its bytes
        if (!t.io(c, s)) return std::nullopt;
        break;
    }
    steps.push_back(s);
  }
  if (!opened || !named || metadata_at != r.metadata.size()) return std::nullopt;
  return steps;
}

void read_like_driver(storage::File& file, unsigned char* out, std::uint64_t size, std::uint64_t offset) {
  while (size > 0) {
    const std::size_t n = file.pread_some(out, size, offset);
    if (n == 0) {
      std::memset(out, 0, size);
      return;
    }
    out += n;
    offset += n;
    size -= n;
  }
}

bool issue_file_step(const Hdf5Step& s, storage::File& file, const std::string& path) {
  switch (s.kind) {
    case Kind::lock: storage::lock_as_hdf5(file, s.exclusive); return true;
    case Kind::unlock: file.unlock(); return true;
    case Kind::path_stat: storage::name_file_as_hdf5(path); return true;
    case Kind::close: file.close(); return true;
    default: return false;
  }
}

}  // namespace trainio::format
