#include "format/hdf5/hdf5_write_template.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace trainio::format {

namespace {

using storage::DriverCall;
using Kind = Hdf5WriteTemplate::Step::Kind;

// The extent that holds all of [offset, offset + size), if one does.
const Hdf5RawExtent* extent_holding(std::span<const Hdf5RawExtent> raw, std::uint64_t offset, std::uint64_t size) {
  for (const Hdf5RawExtent& e : raw)
    if (offset >= e.offset && offset + size <= e.offset + e.bytes) return &e;
  return nullptr;
}

}  // namespace

std::optional<Hdf5WriteTemplate> Hdf5WriteTemplate::learn(const storage::DriverRecording& r,
                                                          std::span<const Hdf5RawExtent> raw) {
  Hdf5WriteTemplate t;
  bool probed = false, created = false, stat_placed = false;
  std::size_t metadata_at = 0;
  for (const DriverCall& c : r.calls) {
    Step s;
    switch (c.kind) {
      case DriverCall::Kind::open_missing:
        if (probed || created) return std::nullopt;
        probed = true;
        s.kind = Kind::probe;
        break;
      case DriverCall::Kind::open:
        if (created || !c.create) return std::nullopt;  // one new file per recording
        created = true;
        s.kind = Kind::create;
        break;
      case DriverCall::Kind::lock:
        s.kind = Kind::lock;
        s.exclusive = c.exclusive;
        break;
      case DriverCall::Kind::unlock: s.kind = Kind::unlock; break;
      case DriverCall::Kind::close: s.kind = Kind::close; break;
      case DriverCall::Kind::truncate:
        s.kind = Kind::truncate;
        s.offset = c.offset;
        break;
      case DriverCall::Kind::read:
      case DriverCall::Kind::write:
        if (!created) return std::nullopt;
        if (!stat_placed) {  // H5Fcreate names the file (lstat) once it is open and locked
          t.steps_.push_back({.kind = Kind::path_stat});
          stat_placed = true;
        }
        s.offset = c.offset;
        s.size = c.size;
        if (c.kind == DriverCall::Kind::read) {
          s.kind = Kind::read;
          if (c.type != H5FD_MEM_DRAW) metadata_at += c.size;  // the driver kept its bytes too
        } else if (c.type != H5FD_MEM_DRAW) {
          s.kind = Kind::metadata;
          s.source = metadata_at;
          metadata_at += c.size;
        } else {
          const Hdf5RawExtent* e = extent_holding(raw, c.offset, c.size);
          if (!e) return std::nullopt;
          s.kind = e->zeros ? Kind::zeros : Kind::data;
          s.source = e->content_offset + (c.offset - e->offset);
          t.largest_raw_ = std::max(t.largest_raw_, c.size);
        }
        break;
    }
    t.steps_.push_back(s);
  }
  if (!created || metadata_at != r.metadata.size() || t.steps_.back().kind != Kind::close) return std::nullopt;
  t.metadata_ = r.metadata;  // read-backs' bytes too (few): the offsets of the written ones index it
  return t;
}

void Hdf5WriteTemplate::write(const std::string& path, ContentSource& content, util::Bytes& buffer,
                              std::vector<unsigned char>& scratch) const {
  if (buffer.size() < largest_raw_) buffer.resize(largest_raw_);
  storage::File file;
  for (const Step& s : steps_) {
    switch (s.kind) {
      case Kind::probe:
        if (file.try_reopen(path, {.access = storage::Access::read_write, .close_on_exec = false}))
          throw io_error(fmt::format("'{}' exists already", path), "remove it; trainio writes new files only");
        break;
      case Kind::create:
        file.reopen(path, {.access = storage::Access::read_write_new, .close_on_exec = false});
        (void)file.stat();
        break;
      case Kind::lock: storage::lock_as_hdf5(file, s.exclusive); break;
      case Kind::unlock: file.unlock(); break;
      case Kind::path_stat: storage::name_file_as_hdf5(path); break;
      case Kind::read:
        scratch.resize(s.size);
        for (std::uint64_t done = 0; done < s.size;) {
          const std::size_t n = file.pread_some(scratch.data() + done, s.size - done, s.offset + done);
          if (n == 0) break;  // past the end: the driver reads zeros
          done += n;
        }
        break;
      case Kind::metadata: file.pwrite_all(metadata_.data() + s.source, s.size, s.offset); break;
      case Kind::data:
        content.seek(s.source);
        content.fill(buffer.data(), s.size);
        file.pwrite_all(buffer.data(), s.size, s.offset);
        break;
      case Kind::zeros:
        std::memset(buffer.data(), 0, s.size);
        file.pwrite_all(buffer.data(), s.size, s.offset);
        break;
      case Kind::truncate: file.truncate(s.offset); break;
      case Kind::close: file.close(); break;
    }
  }
}

}  // namespace trainio::format
