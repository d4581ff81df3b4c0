#pragma once
// PyTorch checkpoint files: torch.save(state, open(path, "wb")) and torch.load(open(path, "rb"))
// of PyTorch 1.13 (Debian 12), re-enacted. The file is PyTorch's zip archive, byte for byte:
//   archive/data.pkl   the pickled dict (protocol 2): each tensor a _rebuild_tensor_v2 reduce
//                      whose storage is a persistent id ('storage', <dtype>Storage, key, 'cpu', n)
//   archive/data/<k>   each tensor's bytes, in the order the pickle first names them
//   archive/version    "3\n"
// Records are stored (no compression) with data descriptors, their data aligned to 64 bytes by
// an "FB" extra field; zip64 fields appear where sizes or offsets reach 4 GiB; a zip64 end
// record always precedes the end record. Checked in the tests by torch.load and by re-saving.
//
// Writing replays the Python-level calls torch.save makes on the file (header, name, padding,
// data, descriptor per record; then the central directory and end records) through Python's
// buffered writer; loading replays torch.load's calls (seekability and zip probes, miniz's
// search for the end records, then each record's local header and data) through Python's
// buffered reader. Deviation: a tensor's bytes move in pieces of the caller's scratch buffer
// (PyTorch moves each tensor with one read or write), so memory stays bounded.

#include <cstdint>
#include <string>
#include <vector>

#include "format/format.hpp"
#include "format/python_io.hpp"
#include "plan/state_dict.hpp"
#include "util/page_aligned.hpp"

namespace trainio::format::torch {

// Where every record of a saved state lies. Computed from the state alone.
class Archive {
 public:
  explicit Archive(const plan::StateDict& state);

  struct Record {
    std::string name;                       // "archive/data/0", ...
    std::uint64_t header_offset = 0;
    std::uint64_t data_offset = 0;
    std::uint64_t size = 0;
    const plan::TensorSpec* tensor = nullptr;  // null for data.pkl and version
    std::string local_header;               // signature .. extra field
    bool zip64 = false;                     // 24-byte descriptor, zip64 extra fields
  };
  // In file order: data.pkl, the storages sorted by key as text (as torch.save writes them), version.
  const std::vector<Record>& records() const { return records_; }
  // Record indices of the storages in the order torch.load reads them (key 0, 1, 2, ...).
  const std::vector<std::size_t>& load_order() const { return load_order_; }
  const std::string& pickle() const { return pickle_; }
  std::uint64_t central_directory_offset() const { return cd_offset_; }
  std::uint64_t central_directory_size() const { return cd_size_; }
  std::uint64_t file_size() const { return file_size_; }
  std::uint64_t tensor_bytes() const { return tensor_bytes_; }

  // The central directory and end records, once every record's CRC-32 is known.
  std::string trailer(const std::vector<std::uint32_t>& crcs) const;
  // The data descriptor that follows record `i`.
  std::string descriptor(std::size_t i, std::uint32_t crc) const;

 private:
  std::vector<Record> records_;
  std::vector<plan::TensorSpec> tensors_;  // by storage key
  std::vector<std::size_t> load_order_;
  std::string pickle_;
  std::uint64_t cd_offset_ = 0, cd_size_ = 0, file_size_ = 0, tensor_bytes_ = 0;
};

// The bytes a tensor holds: from `random` (randomize_tensor, the default), or, when it is null,
// torch.ones of the tensor's dtype (randomize_tensor: false).
class TensorContent {
 public:
  explicit TensorContent(ContentSource* random) : random_(random) {}
  // Fills `size` bytes of `tensor` starting at byte `offset` of its data.
  void fill(const plan::TensorSpec& tensor, std::uint64_t offset, char* dest, std::size_t size);

 private:
  ContentSource* random_;
};

// torch.save(state, f) on an open Python writer (the caller opens, fsyncs and closes).
// `scratch` holds two pieces of tensor data (one generated while the other is written); half its
// size is the largest write of tensor bytes.
void save(const Archive& archive, PyBufferedWriter& out, TensorContent& content, util::Bytes& scratch);

// The same bytes written with O_DIRECT: aligned writes of `scratch`-sized pieces, the unaligned
// tail after clearing O_DIRECT. `out` is open for writing with O_DIRECT.
void save_direct(const Archive& archive, storage::File& out, TensorContent& content, util::Bytes& scratch,
                 std::size_t alignment);

// torch.load(f) on an open Python reader (the caller opens and closes); tensors are read in
// pieces of half of `scratch`. Returns the tensor bytes read. A file that is not this archive (short, other layout) is a dataset error naming it.
std::uint64_t load(const Archive& archive, PyBufferedFile& in, util::Bytes& scratch);

}  // namespace trainio::format::torch
