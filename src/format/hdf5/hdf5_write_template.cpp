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
  Hdf5Translation writing;
  writing.writes = true;
  writing.names_file_before = [](const DriverCall&) { return true; };  // once it is open and locked
  writing.io = [&](const DriverCall& c, Step& s) {
    s.offset = c.offset;
    s.size = c.size;
    if (c.kind == DriverCall::Kind::read) {
      s.kind = Kind::read;
      return true;
    }
    if (c.type != H5FD_MEM_DRAW) {
      s.kind = Kind::metadata;
      return true;
    }
    const Hdf5RawExtent* e = extent_holding(raw, c.offset, c.size);
    if (!e) return false;
    s.kind = e->zeros ? Kind::zeros : Kind::data;
    s.source = e->content_offset + (c.offset - e->offset);
    t.largest_raw_ = std::max(t.largest_raw_, c.size);
    return true;
  };
  auto steps = translate_hdf5_calls(r, writing);
  if (!steps || steps->back().kind != Kind::close) return std::nullopt;
  t.steps_ = std::move(*steps);
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
      case Kind::read:
        scratch.resize(s.size);
        read_like_driver(file, scratch.data(), s.size, s.offset);
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
      default: issue_file_step(s, file, path); break;  // lock, unlock, path_stat, close
    }
  }
}

}  // namespace trainio::format
