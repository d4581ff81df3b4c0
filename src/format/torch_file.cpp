#include "format/torch_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "format/zip.hpp"
#include "util/error.hpp"

namespace trainio::format::torch {

namespace {

constexpr std::uint64_t kMax32 = 0xFFFFFFFFULL;  // MZ_UINT32_MAX
constexpr std::size_t kAlignment = 64;           // PyTorch's kFieldAlignment
constexpr std::size_t kDescriptor32 = 16, kDescriptor64 = 24;
constexpr std::size_t kZip64EndSize = 56, kLocatorSize = 20, kEndSize = 22;

void le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

const char* storage_class(config::ModelDataType t) {
  switch (t) {
    case config::ModelDataType::int8: return "CharStorage";
    case config::ModelDataType::uint8: return "ByteStorage";
    case config::ModelDataType::fp16: return "HalfStorage";
    case config::ModelDataType::bf16: return "BFloat16Storage";
    case config::ModelDataType::fp32: return "FloatStorage";
    case config::ModelDataType::fp64: return "DoubleStorage";
  }
  return "CharStorage";
}

// Python's pickle protocol 2, as torch.save drives it, for the objects a state holds. Objects
// Python would share (the 'storage' and 'cpu' strings, globals, a dict reached twice) are
// memoized by identity; everything else (keys, storage keys, tuples) is a new object each time.
class Pickler {
 public:
  std::string out;
  std::vector<const plan::TensorSpec*> storages;  // in the order the pickle names them

  void dump(const plan::StateDict& state) {
    out += "\x80\x02";
    save_dict(state);
    out += '.';
  }

 private:
  void put() {
    const std::uint32_t i = next_++;
    if (i < 256) {
      out += 'q';
      out += static_cast<char>(i);
    } else {
      out += 'r';
      le(out, i, 4);
    }
  }
  bool get(const void* identity) {
    const auto it = memo_.find(identity);
    if (it == memo_.end()) return false;
    if (it->second < 256) {
      out += 'h';
      out += static_cast<char>(it->second);
    } else {
      out += 'j';
      le(out, it->second, 4);
    }
    return true;
  }
  void memoize(const void* identity) {
    memo_[identity] = next_;
    put();
  }
  void save_str(std::string_view s) {  // BINUNICODE
    out += 'X';
    le(out, s.size(), 4);
    out += s;
  }
  void save_global(const void* identity, std::string_view module, std::string_view name) {
    if (get(identity)) return;
    out += 'c';
    out += module;
    out += '\n';
    out += name;
    out += '\n';
    memoize(identity);
  }
  void save_int(std::uint64_t v) {
    if (v <= 0xff) {
      out += 'K';
      le(out, v, 1);
    } else if (v <= 0xffff) {
      out += 'M';
      le(out, v, 2);
    } else if (v <= 0x7fffffff) {
      out += 'J';
      le(out, v, 4);
    } else {  // LONG1: little-endian two's complement, one byte more than the bits need
      int bits = 0;
      for (std::uint64_t x = v; x; x >>= 1) ++bits;
      const int n = (bits >> 3) + 1;
      out += '\x8a';
      out += static_cast<char>(n);
      le(out, v, n > 8 ? 8 : n);
      for (int i = 8; i < n; ++i) out += '\0';
    }
  }
  void save_dict(const plan::StateDict& d) {
    if (get(&d)) return;
    out += '}';
    memoize(&d);
    // _batch_setitems: MARK ... SETITEMS per 1000 items, SETITEM for a lone one.
    for (std::size_t first = 0; first < d.items.size(); first += 1000) {
      const std::size_t n = std::min<std::size_t>(1000, d.items.size() - first);
      if (n > 1) out += '(';
      for (std::size_t i = first; i < first + n; ++i) {
        const auto& item = d.items[i];
        if (item.key_kind == plan::StateDict::Key::literal) {
          // One shared string object per literal: the pickle stores it once.
          const void* identity = &literals_.emplace(item.key, 0).first->first;
          if (!get(identity)) {
            save_str(item.key);
            memoize(identity);
          }
        } else {
          save_str(item.key);
          put();
        }
        if (item.dict) save_dict(*item.dict);
        else save_tensor(item.tensor);
      }
      out += n > 1 ? 'u' : 's';
    }
  }
  void save_tensor(const plan::TensorSpec& t) {
    static const char rebuild = 0, ordered_dict = 0, storage_word = 0, cpu_word = 0;
    static const char classes[6] = {};
    save_global(&rebuild, "torch._utils", "_rebuild_tensor_v2");
    out += '(';
    // The storage, as a persistent id: ('storage', <class>, key, 'cpu', elements).
    out += '(';
    if (!get(&storage_word)) {
      save_str("storage");
      memoize(&storage_word);
    }
    save_global(&classes[static_cast<int>(t.dtype)], "torch", storage_class(t.dtype));
    save_str(std::to_string(storages.size()));
    put();
    storages.push_back(&t);
    if (!get(&cpu_word)) {
      save_str("cpu");
      memoize(&cpu_word);
    }
    save_int(t.elements);
    out += 't';
    put();
    out += 'Q';
    save_int(0);  // storage offset
    save_int(t.elements);
    out += '\x85';  // size (n,)
    put();
    save_int(1);
    out += '\x85';  // stride (1,)
    put();
    out += '\x89';  // requires_grad False
    save_global(&ordered_dict, "collections", "OrderedDict");
    out += ")R";  // backward hooks: OrderedDict()
    put();
    out += 't';
    put();
    out += 'R';
    put();
  }

  std::uint32_t next_ = 0;
  std::map<const void*, std::uint32_t> memo_;
  std::map<std::string, int> literals_;  // stable addresses stand for the shared strings
};

Error not_the_archive(const std::string& path, const std::string& what) {
  return data_error(fmt::format("'{}' is not the checkpoint file this layout writes: {}", path, what),
                    "the checkpoint folder holds other files: write the checkpoints first (num_checkpoints_write), or "
                    "point checkpoint.checkpoint_folder elsewhere");
}

}  // namespace

Archive::Archive(const plan::StateDict& state) {
  Pickler p;
  p.dump(state);
  pickle_ = std::move(p.out);
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
      le(extra, 1, 2);
      le(extra, (big ? 16 : 0) + (far ? 8 : 0), 2);
      if (big) {
        le(extra, size, 8);
        le(extra, 0, 8);
      }
      if (far) le(extra, cursor, 8);
    }
    const std::uint64_t start = cursor + zip::kLocalHeaderFixed + r.name.size() + extra.size() + 4;
    const std::size_t pad = static_cast<std::size_t>((kAlignment - start % kAlignment) % kAlignment);
    extra += "FB";
    le(extra, pad, 2);
    extra.append(pad, 'Z');
    std::string& h = r.local_header;
    le(h, 0x04034b50, 4);
    le(h, 0, 2);       // version needed
    le(h, 0x0808, 2);  // data descriptor follows; UTF-8 names
    le(h, 0, 2);       // stored
    le(h, 0, 4);       // time, date
    le(h, 0, 4);       // CRC, in the descriptor
    le(h, 0, 8);       // sizes, in the descriptor
    le(h, r.name.size(), 2);
    le(h, extra.size(), 2);
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
  le(d, 0x08074b50, 4);
  le(d, crc, 4);
  le(d, r.size, r.zip64 ? 8 : 4);
  le(d, r.size, r.zip64 ? 8 : 4);
  return d;
}

std::string Archive::trailer(const std::vector<std::uint32_t>& crcs) const {
  std::string t;
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const Record& r = records_[i];
    const bool big = r.size >= kMax32, far = r.header_offset >= kMax32;
    std::string extra;
    if (big || far) {
      le(extra, 1, 2);
      le(extra, (big ? 16 : 0) + (far ? 8 : 0), 2);
      if (big) {
        le(extra, r.size, 8);
        le(extra, r.size, 8);
      }
      if (far) le(extra, r.header_offset, 8);
    }
    le(t, 0x02014b50, 4);
    le(t, 0, 2);  // made by
    le(t, 0, 2);  // needed
    le(t, 0x0808, 2);
    le(t, 0, 2);  // stored
    le(t, 0, 4);  // time, date
    le(t, crcs[i], 4);
    le(t, big ? kMax32 : r.size, 4);
    le(t, big ? kMax32 : r.size, 4);
    le(t, r.name.size(), 2);
    le(t, extra.size(), 2);
    le(t, 0, 2);  // comment
    le(t, 0, 2);  // disk
    le(t, 0, 2);  // internal attributes
    le(t, 0, 4);  // external attributes
    le(t, far ? kMax32 : r.header_offset, 4);
    t += r.name;
    t += extra;
  }
  const std::uint64_t cd_size = t.size(), entries = records_.size();
  const std::uint64_t zip64_end = cd_offset_ + cd_size;
  le(t, 0x06064b50, 4);
  le(t, kZip64EndSize - 12, 8);
  le(t, 0x031e, 2);  // made by
  le(t, 0x002d, 2);  // needed: 4.5
  le(t, 0, 4);
  le(t, 0, 4);
  le(t, entries, 8);
  le(t, entries, 8);
  le(t, cd_size, 8);
  le(t, cd_offset_, 8);
  le(t, 0x07064b50, 4);
  le(t, 0, 4);
  le(t, zip64_end, 8);
  le(t, 1, 4);
  le(t, 0x06054b50, 4);
  le(t, 0, 2);
  le(t, 0, 2);
  le(t, std::min<std::uint64_t>(entries, 0xffff), 2);
  le(t, std::min<std::uint64_t>(entries, 0xffff), 2);
  le(t, std::min(cd_size, kMax32), 4);
  le(t, std::min(cd_offset_, kMax32), 4);
  le(t, 0, 2);
  return t;
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

namespace {

// The Python-level writes torch.save makes, handed to a sink; `crcs` collects each record's CRC.
template <typename Sink>
void write_archive(const Archive& a, Sink& sink, TensorContent& content) {
  std::vector<std::uint32_t> crcs;
  const auto& records = a.records();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    // miniz writes the fixed header, the name and the extra field separately.
    sink.bytes(r.local_header.data(), zip::kLocalHeaderFixed);
    sink.bytes(r.local_header.data() + zip::kLocalHeaderFixed, r.name.size());
    sink.bytes(r.local_header.data() + zip::kLocalHeaderFixed + r.name.size(),
               r.local_header.size() - zip::kLocalHeaderFixed - r.name.size());
    std::uint32_t crc = 0;
    if (r.tensor) {
      std::uint64_t at = 0;
      sink.generated(r.size, [&](char* dest, std::size_t n) {
        content.fill(*r.tensor, at, dest, n);
        crc = zip::crc32(crc, dest, n);
        at += n;
      });
    } else {
      const std::string_view data = i == 0 ? std::string_view(a.pickle()) : std::string_view("3\n");
      crc = zip::crc32(0, data.data(), data.size());
      sink.bytes(data.data(), data.size());
    }
    crcs.push_back(crc);
    const std::string d = a.descriptor(i, crc);
    sink.bytes(d.data(), d.size());
  }
  // The central directory in one write, then each end record.
  const std::string t = a.trailer(crcs);
  const std::size_t cd = static_cast<std::size_t>(a.central_directory_size());
  sink.bytes(t.data(), cd);
  sink.bytes(t.data() + cd, kZip64EndSize);
  sink.bytes(t.data() + cd + kZip64EndSize, kLocatorSize);
  sink.bytes(t.data() + cd + kZip64EndSize + kLocatorSize, kEndSize);
}

struct PythonSink {
  PyBufferedWriter& out;
  util::Bytes& scratch;
  void bytes(const char* data, std::size_t n) { out.write(data, n); }
  template <typename Fill>
  void generated(std::uint64_t n, Fill&& fill) {
    out.write_generated(n, scratch.data(), scratch.size() / 2, fill);
  }
};

// Stages the stream in half the scratch buffer (a piece, as the buffered path writes) and writes
// whole aligned pieces.
struct DirectSink {
  storage::File& out;
  util::Bytes& scratch;
  std::size_t alignment;
  std::size_t used = 0;
  std::size_t capacity() const { return scratch.size() / 2; }

  void spill() {
    const std::size_t whole = used / alignment * alignment;
    if (whole == 0) return;
    out.write_all(scratch.data(), whole);
    std::memmove(scratch.data(), scratch.data() + whole, used - whole);
    used -= whole;
  }
  void bytes(const char* data, std::size_t n) {
    while (n > 0) {
      const std::size_t take = std::min(n, capacity() - used);
      std::memcpy(scratch.data() + used, data, take);
      used += take;
      data += take;
      n -= take;
      if (used == capacity()) spill();
    }
  }
  template <typename Fill>
  void generated(std::uint64_t n, Fill&& fill) {
    while (n > 0) {
      const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(n, capacity() - used));
      fill(scratch.data() + used, take);
      used += take;
      n -= take;
      if (used == capacity()) spill();
    }
  }
  void finish() {
    spill();
    if (used == 0) return;
    out.clear_direct();  // the unaligned tail cannot go through O_DIRECT
    out.write_all(scratch.data(), used);
    used = 0;
  }
};

}  // namespace

void save(const Archive& archive, PyBufferedWriter& out, TensorContent& content, util::Bytes& scratch) {
  PythonSink sink{out, scratch};
  write_archive(archive, sink, content);
  out.flush();  // torch.save flushes the file object at the end
}

void save_direct(const Archive& archive, storage::File& out, TensorContent& content, util::Bytes& scratch,
                 std::size_t alignment) {
  if (scratch.size() < 2 * alignment || scratch.size() % (2 * alignment) != 0)
    throw internal_error("the O_DIRECT staging buffer is not a multiple of the alignment");
  DirectSink sink{out, scratch, alignment};
  write_archive(archive, sink, content);
  sink.finish();
}

std::uint64_t load(const Archive& archive, PyBufferedFile& in, util::Bytes& scratch) {
  const std::string& path = in.path();
  char small[4096];
  auto read_exact = [&](std::uint64_t offset, std::size_t n, char* dest) {
    in.seek(static_cast<std::int64_t>(offset), SEEK_SET);
    if (in.readinto(dest, n) != n) throw not_the_archive(path, fmt::format("it ends before byte {}", offset + n));
  };
  // _check_seekable: f.seek(f.tell()); _is_zipfile: four 1-byte reads, then back.
  in.seek(static_cast<std::int64_t>(in.tell()), SEEK_SET);
  const std::uint64_t start = in.tell();
  char magic[4];
  for (char& c : magic)
    if (in.read(&c, 1) != 1) throw not_the_archive(path, "it is empty or shorter than a zip header");
  in.seek(static_cast<std::int64_t>(start), SEEK_SET);
  if (std::memcmp(magic, "PK\x03\x04", 4) != 0) throw not_the_archive(path, "it is not a zip archive");
  // torch.load notes its position; the reader's adapter learns the size.
  in.tell();
  const std::uint64_t here = in.tell();
  const std::uint64_t size = in.seek(0, SEEK_END);
  in.tell();
  in.seek(static_cast<std::int64_t>(here), SEEK_SET);
  if (size != archive.file_size())
    throw not_the_archive(path, fmt::format("it holds {} bytes, this layout writes {}", size, archive.file_size()));
  read_exact(0, 8, small);  // PyTorchStreamReader: the legacy "PYTORCH1" magic?
  // miniz: the last (up to) 4 KiB to find the end record, the end record, the zip64 locator and
  // end record, then the central directory.
  const std::uint64_t tail = size < sizeof small ? size : sizeof small;
  read_exact(size - tail, static_cast<std::size_t>(tail), small);
  read_exact(size - kEndSize, kEndSize, small);
  read_exact(size - kEndSize - kLocatorSize, kLocatorSize, small);
  read_exact(archive.central_directory_offset() + archive.central_directory_size(), kZip64EndSize, small);
  const std::size_t cd = static_cast<std::size_t>(archive.central_directory_size());
  if (scratch.size() < cd) scratch.resize(cd);
  read_exact(archive.central_directory_offset(), cd, scratch.data());
  // Records: each local header, then its data. "version" first, then data.pkl, then the storages
  // in the order the unpickler asks for them.
  const auto& records = archive.records();
  auto read_record = [&](const Archive::Record& r) -> std::uint64_t {
    read_exact(r.header_offset, zip::kLocalHeaderFixed, small);
    if (std::memcmp(small, "PK\x03\x04", 4) != 0) throw not_the_archive(path, "a local header is not where the layout puts it");
    in.seek(static_cast<std::int64_t>(r.data_offset), SEEK_SET);
    const std::uint64_t got = in.readinto_discard(r.size, scratch.data(), scratch.size() / 2);
    if (got != r.size) throw not_the_archive(path, fmt::format("record {} ends early", r.name));
    return got;
  };
  read_record(records.back());
  read_record(records.front());
  std::uint64_t bytes = 0;
  for (const std::size_t i : archive.load_order()) bytes += read_record(records[i]);
  return bytes;
}

}  // namespace trainio::format::torch
