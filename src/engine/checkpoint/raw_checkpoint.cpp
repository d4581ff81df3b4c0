#include "engine/checkpoint/raw_checkpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "storage/new_file.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace trainio::engine {

std::vector<RawFile> raw_files(const std::vector<std::pair<std::string, const format::torch::Archive*>>& torch_files,
                               int rank, config::CheckpointLayout layout) {
  std::vector<RawFile> out;
  if (torch_files.empty()) return out;
  RawFile whole{fmt::format("rank_{}.bin", rank), {}, 0};
  for (const auto& [name, archive] : torch_files) {
    const std::string stem = name.ends_with(".pt") ? name.substr(0, name.size() - 3) : name;
    const auto& records = archive->records();
    // load_order()[k] is the record of storage k: the tensors in the order torch numbers them.
    for (std::size_t k = 0; k < archive->load_order().size(); ++k) {
      const plan::TensorSpec& t = *records[archive->load_order()[k]].tensor;
      if (layout == config::CheckpointLayout::per_tensor) {
        out.push_back({fmt::format("{}-{}.bin", stem, k), {t}, t.bytes()});
      } else {
        whole.tensors.push_back(t);
        whole.bytes += t.bytes();
      }
    }
  }
  if (layout == config::CheckpointLayout::per_rank) out.push_back(std::move(whole));
  return out;
}

std::size_t raw_staging_bytes(std::uint64_t write_buffer, std::uint64_t largest_file) {
  constexpr std::uint64_t kGenerate = 8ull << 20;
  std::uint64_t piece = write_buffer >= kGenerate ? write_buffer : kGenerate / write_buffer * write_buffer;
  // A file smaller than a piece needs no more than itself, in whole buffers.
  const std::uint64_t need = (largest_file + write_buffer - 1) / write_buffer * write_buffer;
  piece = std::max<std::uint64_t>(std::min(piece, need), write_buffer);
  return static_cast<std::size_t>(2 * piece);
}

namespace {

// The tensors' bytes as one stream, across tensor boundaries.
class TensorStream {
 public:
  TensorStream(const std::vector<plan::TensorSpec>& tensors, format::torch::TensorContent& content)
      : tensors_(tensors), content_(content) {}
  void fill(char* dest, std::uint64_t n) {
    while (n > 0) {
      while (at_ >= tensors_[index_].bytes()) {
        ++index_;
        at_ = 0;
      }
      const auto take = static_cast<std::size_t>(std::min(n, tensors_[index_].bytes() - at_));
      content_.fill(tensors_[index_], at_, dest, take);
      at_ += take;
      dest += take;
      n -= take;
    }
  }

 private:
  const std::vector<plan::TensorSpec>& tensors_;
  format::torch::TensorContent& content_;
  std::size_t index_ = 0;
  std::uint64_t at_ = 0;
};

}  // namespace

void write_raw(const RawFile& file, const std::string& path, const RawWriteOptions& o,
               format::torch::TensorContent& content, util::Bytes& scratch, format::Overlap& beside) {
  const std::uint64_t b = o.write_buffer;
  const std::uint64_t piece = scratch.size() / 2 / b * b;
  if (piece == 0 || (o.direct && (b % o.alignment != 0 || piece % o.alignment != 0)))
    throw internal_error("the raw checkpoint writer's buffer does not hold whole aligned write buffers");
  storage::NewFile out(path, {.in_place = !o.atomic, .access = storage::Access::write_truncate, .direct = o.direct});
  storage::File& f = out.file();
  TensorStream stream(file.tensors, content);
  char* cur = scratch.data();
  char* next = scratch.data() + piece;
  const std::int64_t t0 = util::now_ns();
  std::uint64_t left = file.bytes;
  if (left > 0) stream.fill(cur, std::min(piece, left));
  while (left > 0) {
    const std::uint64_t n = std::min(piece, left);
    left -= n;
    auto write = [&] {
      for (std::uint64_t at = 0; at < n; at += b) {
        const std::size_t call = static_cast<std::size_t>(std::min(b, n - at));
        if (o.direct && call % o.alignment != 0) {  // only a file's last call can be short
          const std::size_t aligned = call / o.alignment * o.alignment;
          if (aligned > 0) f.write_all(cur + at, aligned);
          f.clear_direct();
          f.write_all(cur + at + aligned, call - aligned);
        } else {
          f.write_all(cur + at, call);
        }
      }
    };
    auto generate = [&] { stream.fill(next, std::min(piece, left)); };
    // Buffered writes are memory copies into the page cache: generating beside them competes for
    // the same memory and cores (64 MiB calls ran at half fio's rate so), so it follows them.
    if (left > 0 && o.direct) {
      format::write_beside(beside, generate, write);
    } else {
      write();
      if (left > 0) generate();
    }
    std::swap(cur, next);
  }
  if (o.fsync) f.fsync();
  out.commit();
  beside.choice().record(file.bytes, util::now_ns() - t0);
}

}  // namespace trainio::engine
