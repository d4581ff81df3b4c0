#include "engine/checkpoint/reshard_load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "storage/file.hpp"
#include "storage/fs.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"

namespace trainio::engine {

ReshardLoader::ReshardLoader(const plan::ReshardPlan& plan, int rank)
    : saved_(plan.saved()), load_(plan.load()), reads_(plan.reads_of(rank)) {
  archives_.reserve(reads_.files.size());
  for (const auto& f : reads_.files) {
    archives_.emplace_back(f.file.state);
    largest_file_ = std::max(largest_file_, archives_.back().file_size());
  }
}

void ReshardLoader::read(const std::string& dir, util::Bytes& scratch, metrics::CheckpointRecord& rec,
                         const std::function<void()>& before_scratch) const {
  auto& r = rec.reshard;
  r.on = true;
  r.saved = {saved_.tensor, saved_.pipeline, saved_.data};
  r.load = {load_.tensor, load_.pipeline, load_.data};
  r.shard_bytes = reads_.shard_bytes;
  r.unsaved_bytes = reads_.unsaved_bytes;
  std::string index_buffer;
  bool ready = false;
  for (std::size_t i = 0; i < reads_.files.size(); ++i) {
    const plan::ReshardFile& f = reads_.files[i];
    const format::torch::Archive& a = archives_[i];
    const std::string path = util::join(dir, f.file.name);
    auto wrong = [&](const std::string& what) {
      return data_error(fmt::format("checkpoint file '{}' {}", path, what),
                        "load the checkpoint with the layout and ranks that saved it described (model.parallelism, "
                        "--resume-from), or point checkpoint.checkpoint_folder elsewhere");
    };
    if (!storage::file_size(path))
      throw data_error(fmt::format("checkpoint file '{}' is missing (written by rank {} of the {}-rank save)", path,
                                   f.saved_rank, saved_.ranks()),
                       "write the checkpoint first, or give --resume-from the job that wrote it");
    storage::File in = storage::File::open(path);
    const std::uint64_t size = in.size();
    if (size != a.file_size()) throw wrong(fmt::format("holds {} bytes, the save's layout writes {}", size, a.file_size()));
    // Where the records lie: the central directory, the zip64 end record and locator, the end record.
    const std::uint64_t index = size - a.central_directory_offset();
    index_buffer.resize(static_cast<std::size_t>(index));
    in.pread_exact(index_buffer.data(), index_buffer.size(), a.central_directory_offset());
    if (std::memcmp(index_buffer.data(), "PK\x01\x02", 4) != 0) throw wrong("has no central directory where the layout puts it");
    r.index_bytes += index;
    std::vector<bool> header_read(a.records().size(), false);
    for (const plan::ReshardPiece& p : f.pieces) {
      if (p.tensor >= a.load_order().size()) throw internal_error(fmt::format("{} has no tensor {}", f.file.name, p.tensor));
      const std::size_t ri = a.load_order()[p.tensor];
      const auto& rec_at = a.records()[ri];
      if (p.first_byte + p.bytes > rec_at.size) throw internal_error(fmt::format("a piece runs past {} of {}", rec_at.name, f.file.name));
      if (!ready) {
        if (before_scratch) before_scratch();
        ready = true;
      }
      const std::size_t chunk = std::max<std::size_t>(scratch.size() / 2, 4096);
      if (!header_read[ri]) {
        const std::size_t n = rec_at.local_header.size();
        in.pread_exact(scratch.data(), n, rec_at.header_offset);
        if (std::memcmp(scratch.data(), "PK\x03\x04", 4) != 0) throw wrong(fmt::format("has no local header of {} where the layout puts it", rec_at.name));
        header_read[ri] = true;
        r.index_bytes += n;
      }
      for (std::uint64_t done = 0; done < p.bytes;) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, p.bytes - done));
        in.pread_exact(scratch.data(), n, rec_at.data_offset + p.first_byte + done);
        done += n;
      }
      r.data_bytes += p.bytes;
      ++r.pieces;
    }
    in.close();
    r.files.push_back(f.file.name);
  }
  rec.files = reads_.files.size();
  rec.tensor_bytes = r.data_bytes;
  rec.file_bytes = r.data_bytes + r.index_bytes;
}

}  // namespace trainio::engine
