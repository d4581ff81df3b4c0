#include "format/parquet/thrift.hpp"

namespace trainio::format::parquet::thrift {

void Writer::varint(std::uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void Writer::header(std::int16_t id, Type t) {
  const int delta = id - last_;
  if (delta > 0 && delta <= 15) {
    out_.push_back(static_cast<char>((delta << 4) | static_cast<int>(t)));
  } else {
    out_.push_back(static_cast<char>(t));
    varint(zigzag(id));
  }
  last_ = id;
}

void Writer::field_i32(std::int16_t id, std::int32_t v) {
  header(id, Type::i32);
  varint(zigzag(v));
}

void Writer::field_i64(std::int16_t id, std::int64_t v) {
  header(id, Type::i64);
  varint(zigzag(v));
}

void Writer::field_bool(std::int16_t id, bool v) { header(id, v ? Type::bool_true : Type::bool_false); }

void Writer::field_i8(std::int16_t id, std::int8_t v) {
  header(id, Type::byte);
  out_.push_back(static_cast<char>(v));
}

void Writer::field_binary(std::int16_t id, std::string_view v) {
  header(id, Type::binary);
  list_binary(v);
}

void Writer::list_binary(std::string_view v) {
  varint(v.size());
  out_.append(v);
}

void Writer::begin_struct(std::int16_t id) {
  header(id, Type::strct);
  stack_.push_back(last_);
  last_ = 0;
}

void Writer::begin_list_struct() {
  stack_.push_back(last_);
  last_ = 0;
}

void Writer::end_struct() {
  out_.push_back(0);
  last_ = stack_.back();
  stack_.pop_back();
}

void Writer::begin_list(std::int16_t id, Type element, std::uint64_t size) {
  header(id, Type::list);
  if (size < 15) {
    out_.push_back(static_cast<char>((size << 4) | static_cast<std::uint64_t>(element)));
  } else {
    out_.push_back(static_cast<char>(0xF0 | static_cast<int>(element)));
    varint(size);
  }
}

std::uint8_t Reader::byte() {
  if (pos_ >= in_.size()) throw ThriftError("metadata ends inside a value");
  return static_cast<std::uint8_t>(in_[pos_++]);
}

std::uint64_t Reader::varint() {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const std::uint8_t b = byte();
    v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return v;
  }
  throw ThriftError("a varint longer than 10 bytes");
}

bool Reader::next_field(std::int16_t& id, Type& type) {
  const std::uint8_t h = byte();
  if (h == 0) {
    if (!stack_.empty()) {
      last_ = stack_.back();
      stack_.pop_back();
    }
    return false;
  }
  type = static_cast<Type>(h & 0x0F);
  if (static_cast<int>(type) > static_cast<int>(Type::strct)) throw ThriftError("an unknown field type");
  const int delta = h >> 4;
  if (delta != 0) {
    id = static_cast<std::int16_t>(last_ + delta);
  } else {
    const std::uint64_t z = varint();
    id = static_cast<std::int16_t>(static_cast<std::int64_t>(z >> 1) ^ -static_cast<std::int64_t>(z & 1));
  }
  last_ = id;
  return true;
}

std::int64_t Reader::read_int(Type t) {
  if (t == Type::byte) return static_cast<std::int8_t>(byte());
  if (t != Type::i16 && t != Type::i32 && t != Type::i64) throw ThriftError("an integer field of another type");
  const std::uint64_t z = varint();
  return static_cast<std::int64_t>(z >> 1) ^ -static_cast<std::int64_t>(z & 1);
}

bool Reader::read_bool(Type t) {
  if (t == Type::bool_true) return true;
  if (t == Type::bool_false) return false;
  throw ThriftError("a boolean field of another type");
}

std::string_view Reader::read_binary() {
  const std::uint64_t n = varint();
  if (n > in_.size() - pos_) throw ThriftError("a binary value runs past the metadata");
  const std::string_view v = in_.substr(pos_, n);
  pos_ += n;
  return v;
}

std::uint64_t Reader::read_list(Type& element) {
  const std::uint8_t h = byte();
  element = static_cast<Type>(h & 0x0F);
  std::uint64_t n = h >> 4;
  if (n == 15) n = varint();
  // Every element takes at least one byte: a larger count is damage, not a long list.
  if (n > in_.size() - pos_) throw ThriftError("a list longer than the metadata");
  return n;
}

void Reader::enter_struct() {
  if (stack_.size() > 64) throw ThriftError("structs nested too deeply");
  stack_.push_back(last_);
  last_ = 0;
}

void Reader::skip(Type t, int depth) {
  if (depth > 64) throw ThriftError("values nested too deeply");
  switch (t) {
    case Type::bool_true:
    case Type::bool_false: return;
    case Type::byte: byte(); return;
    case Type::i16:
    case Type::i32:
    case Type::i64: varint(); return;
    case Type::dbl:
      for (int i = 0; i < 8; ++i) byte();
      return;
    case Type::binary: read_binary(); return;
    case Type::list:
    case Type::set: {
      Type e;
      const std::uint64_t n = read_list(e);
      for (std::uint64_t i = 0; i < n; ++i) {
        if (e == Type::bool_true || e == Type::bool_false) byte();  // one byte per boolean element
        else skip(e, depth + 1);
      }
      return;
    }
    case Type::map: {
      const std::uint64_t n = varint();
      if (n == 0) return;
      if (n > in_.size() - pos_) throw ThriftError("a map longer than the metadata");
      const std::uint8_t kv = byte();
      for (std::uint64_t i = 0; i < n; ++i) {
        skip(static_cast<Type>(kv >> 4), depth + 1);
        skip(static_cast<Type>(kv & 0x0F), depth + 1);
      }
      return;
    }
    case Type::strct: {
      enter_struct();
      std::int16_t id;
      Type ft;
      while (next_field(id, ft)) skip(ft, depth + 1);
      return;
    }
    case Type::stop: break;
  }
  throw ThriftError("an unknown value type");
}

}  // namespace trainio::format::parquet::thrift
