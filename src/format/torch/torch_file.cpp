#include "format/torch/torch_file.hpp"

#include <algorithm>
#include <cstring>

#include "format/torch/torch_pickle.hpp"
#include "format/torch/torch_zip.hpp"
#include "format/archive/zip.hpp"

namespace trainio::format::torch {

Archive::Archive(const plan::StateDict& state) {
  PickledState p = pickle_state(state);
  pickle_ = std::move(p.bytes);
  for (const auto* t : p.storages) tensors_.push_back(*t);

  auto add = [&](std::string name, std::uint64_t size, const plan::TensorSpec* tensor, std::uint64_t& cursor) {
    Record r;
    r.name = "archive/" + std::move(name);
    r.header_offset = cursor;
    r.size = size;
    r.tensor = tensor;
    const bool big = size >= kMax32, far = cursor >= kMax32;
    r.zip64 = big || far;
    std::string extra;
    if (r.zip64) {
      zip::append_le(extra, 1, 2);
      zip::append_le(extra, (big ? 16 : 0) + (far ? 8 : 0), 2);
      if (big) {
        zip::append_le(extra, size, 8);
        zip::append_le(extra, 0, 8);
      }
      if (far) zip::append_le(extra, cursor, 8);
    }
    const std::uint64_t start = cursor + zip::kLocalHeaderFixed + r.name.size() + extra.size() + 4;
    const std::size_t pad = static_cast<std::size_t>((kAlignment - start % kAlignment) % kAlignment);
    extra += "FB";
    zip::append_le(extra, pad, 2);
    extra.append(pad, 'Z');
    std::string& h = r.local_header;
    zip::append_le(h, 0x04034b50, 4);
    zip::append_le(h, 0, 2);       // version needed
    zip::append_le(h, 0x0808, 2);  // data descriptor follows; UTF-8 names
    zip::append_le(h, 0, 2);       // stored
    zip::append_le(h, 0, 4);       // time, date
    zip::append_le(h, 0, 4);       // CRC, in the descriptor
    zip::append_le(h, 0, 8);       // sizes, in the descriptor
    zip::append_le(h, r.name.size(), 2);
    zip::append_le(h, extra.size(), 2);
    h += r.name;
    h += extra;
    r.data_offset = cursor + h.size();
    cursor = r.data_offset + size + (r.zip64 ? kDescriptor64 : kDescriptor32);
    records_.push_back(std::move(r));
  };
  // torch.save writes the storages sorted by key as text: data/0, data/1, data/10, ..., data/2.
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < tensors_.size(); ++i) keys.push_back(std::to_string(i));
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::uint64_t cursor = 0;
  add("data.pkl", pickle_.size(), nullptr, cursor);
  load_order_.resize(tensors_.size());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const std::size_t k = std::stoull(sorted[i]);
    add("data/" + sorted[i], tensors_[k].bytes(), &tensors_[k], cursor);
    load_order_[k] = i + 1;  // torch.load asks for storage k as the unpickler meets it
    tensor_bytes_ += tensors_[k].bytes();
  }
  add("version", 2, nullptr, cursor);
  cd_offset_ = cursor;
  cd_size_ = trailer(std::vector<std::uint32_t>(records_.size(), 0)).size() - kZip64EndSize - kLocatorSize - kEndSize;
  file_size_ = cd_offset_ + cd_size_ + kZip64EndSize + kLocatorSize + kEndSize;
}

std::string Archive::descriptor(std::size_t i, std::uint32_t crc) const {
  const Record& r = records_[i];
  std::string d;
  zip::append_le(d, 0x08074b50, 4);
  zip::append_le(d, crc, 4);
  zip::append_le(d, r.size, r.zip64 ? 8 : 4);
  zip::append_le(d, r.size, r.zip64 ? 8 : 4);
  return d;
}

std::string Archive::trailer(const std::vector<std::uint32_t>& crcs) const {
  std::string t;
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const Record& r = records_[i];
    const bool big = r.size >= kMax32, far = r.header_offset >= kMax32;
    std::string extra;
    if (big || far) {
      zip::append_le(extra, 1, 2);
      zip::append_le(extra, (big ? 16 : 0) + (far ? 8 : 0), 2);
      if (big) {
        zip::append_le(extra, r.size, 8);
        zip::append_le(extra, r.size, 8);
      }
      if (far) zip::append_le(extra, r.header_offset, 8);
    }
    zip::append_le(t, 0x02014b50, 4);
    zip::append_le(t, 0, 2);  // made by
    zip::append_le(t, 0, 2);  // needed
    zip::append_le(t, 0x0808, 2);
    zip::append_le(t, 0, 2);  // stored
    zip::append_le(t, 0, 4);  // time, date
    zip::append_le(t, crcs[i], 4);
    zip::append_le(t, big ? kMax32 : r.size, 4);
    zip::append_le(t, big ? kMax32 : r.size, 4);
    zip::append_le(t, r.name.size(), 2);
    zip::append_le(t, extra.size(), 2);
    zip::append_le(t, 0, 2);  // comment
    zip::append_le(t, 0, 2);  // disk
    zip::append_le(t, 0, 2);  // internal attributes
    zip::append_le(t, 0, 4);  // external attributes
    zip::append_le(t, far ? kMax32 : r.header_offset, 4);
    t += r.name;
    t += extra;
  }
  const std::uint64_t cd_size = t.size(), entries = records_.size();
  const std::uint64_t zip64_end = cd_offset_ + cd_size;
  zip::append_le(t, 0x06064b50, 4);
  zip::append_le(t, kZip64EndSize - 12, 8);
  zip::append_le(t, 0x031e, 2);  // made by
  zip::append_le(t, 0x002d, 2);  // needed: 4.5
  zip::append_le(t, 0, 4);
  zip::append_le(t, 0, 4);
  zip::append_le(t, entries, 8);
  zip::append_le(t, entries, 8);
  zip::append_le(t, cd_size, 8);
  zip::append_le(t, cd_offset_, 8);
  zip::append_le(t, 0x07064b50, 4);
  zip::append_le(t, 0, 4);
  zip::append_le(t, zip64_end, 8);
  zip::append_le(t, 1, 4);
  zip::append_le(t, 0x06054b50, 4);
  zip::append_le(t, 0, 2);
  zip::append_le(t, 0, 2);
  zip::append_le(t, std::min<std::uint64_t>(entries, 0xffff), 2);
  zip::append_le(t, std::min<std::uint64_t>(entries, 0xffff), 2);
  zip::append_le(t, std::min(cd_size, kMax32), 4);
  zip::append_le(t, std::min(cd_offset_, kMax32), 4);
  zip::append_le(t, 0, 2);
  return t;
}

void TensorContent::fill_crc32(const plan::TensorSpec& tensor, std::uint64_t offset, char* dest, std::size_t size,
                               std::uint32_t& crc) {
  if (random_) {
    random_->fill_crc32(dest, size, crc);
    return;
  }
  fill(tensor, offset, dest, size);
  crc = zip::crc32(crc, dest, size);
}

void TensorContent::fill(const plan::TensorSpec& tensor, std::uint64_t offset, char* dest, std::size_t size) {
  if (random_) {
    random_->fill(dest, size);
    return;
  }
  // torch.ones: 1 in the tensor's element type, little-endian.
  static constexpr unsigned char int8_one[] = {0x01}, fp16_one[] = {0x00, 0x3c}, bf16_one[] = {0x80, 0x3f},
                                 fp32_one[] = {0x00, 0x00, 0x80, 0x3f},
                                 fp64_one[] = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
  const unsigned char* one = int8_one;
  switch (tensor.dtype) {
    case config::ModelDataType::int8:
    case config::ModelDataType::uint8: one = int8_one; break;
    case config::ModelDataType::fp16: one = fp16_one; break;
    case config::ModelDataType::bf16: one = bf16_one; break;
    case config::ModelDataType::fp32: one = fp32_one; break;
    case config::ModelDataType::fp64: one = fp64_one; break;
  }
  const std::size_t width = config::element_size(tensor.dtype);
  const std::size_t head = std::min(size, width);
  for (std::size_t i = 0; i < head; ++i) dest[i] = static_cast<char>(one[(offset + i) % width]);
  // The pattern repeats every `width` bytes: double what is filled until the piece is full.
  for (std::size_t done = head; done < size;) {
    const std::size_t n = std::min(done / width * width, size - done);
    std::memcpy(dest + done, dest, n);
    done += n;
  }
}

}  // namespace trainio::format::torch
