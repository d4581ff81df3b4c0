#include "format/torch/torch_pickle.hpp"

#include <map>

#include "format/archive/zip.hpp"

namespace trainio::format::torch {

namespace {

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
      zip::append_le(out, i, 4);
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
      zip::append_le(out, it->second, 4);
    }
    return true;
  }
  void memoize(const void* identity) {
    memo_[identity] = next_;
    put();
  }
  void save_str(std::string_view s) {  // BINUNICODE
    out += 'X';
    zip::append_le(out, s.size(), 4);
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
      zip::append_le(out, v, 1);
    } else if (v <= 0xffff) {
      out += 'M';
      zip::append_le(out, v, 2);
    } else if (v <= 0x7fffffff) {
      out += 'J';
      zip::append_le(out, v, 4);
    } else {  // LONG1: little-endian two's complement, one byte more than the bits need
      int bits = 0;
      for (std::uint64_t x = v; x; x >>= 1) ++bits;
      const int n = (bits >> 3) + 1;
      out += '\x8a';
      out += static_cast<char>(n);
      zip::append_le(out, v, n > 8 ? 8 : n);
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

}  // namespace

PickledState pickle_state(const plan::StateDict& state) {
  Pickler p;
  p.dump(state);
  return {std::move(p.out), std::move(p.storages)};
}

}  // namespace trainio::format::torch
