#pragma once
// The Thrift compact protocol, as far as Parquet's metadata needs it: a writer of structs, lists,
// integers and binaries, and a reader that walks a struct field by field and skips what it does
// not know. Malformed input throws ThriftError; nothing reads past the given bytes.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace trainio::format::parquet::thrift {

// Compact type codes (the low nibble of a field header).
enum class Type : std::uint8_t {
  stop = 0, bool_true = 1, bool_false = 2, byte = 3, i16 = 4, i32 = 5, i64 = 6, dbl = 7,
  binary = 8, list = 9, set = 10, map = 11, strct = 12,
};

struct ThriftError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  void field_i32(std::int16_t id, std::int32_t v);
  void field_i64(std::int16_t id, std::int64_t v);
  void field_bool(std::int16_t id, bool v);
  void field_i8(std::int16_t id, std::int8_t v);
  void field_binary(std::int16_t id, std::string_view v);
  // Opens a nested struct field; close it with end_struct().
  void begin_struct(std::int16_t id);
  void end_struct();
  // A list field of `size` elements of `element` type; structs in it are opened with
  // begin_list_struct() and closed with end_struct().
  void begin_list(std::int16_t id, Type element, std::uint64_t size);
  void begin_list_struct();
  void list_i32(std::int32_t v) { varint(zigzag(v)); }
  void list_binary(std::string_view v);
  // Ends the outermost struct (the message itself).
  void stop() { out_.push_back(0); }

  static std::uint64_t zigzag(std::int64_t v) {
    return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
  }

 private:
  void header(std::int16_t id, Type t);
  void varint(std::uint64_t v);
  std::string& out_;
  std::int16_t last_ = 0;
  std::vector<std::int16_t> stack_;
};

// Reads one struct: next_field() gives each field's id and type until it returns false (stop).
// A field's value is then read with the matching read_*() or skipped with skip().
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool next_field(std::int16_t& id, Type& type);
  std::int64_t read_int(Type t);  // i16, i32 or i64 (zigzag varint) or byte
  bool read_bool(Type t);
  std::string_view read_binary();
  // A list header: its element type and size; then read each element.
  std::uint64_t read_list(Type& element);
  // Enters a nested struct (field or list element); next_field() then walks it.
  void enter_struct();
  void skip(Type t, int depth = 0);
  std::size_t position() const { return pos_; }

 private:
  std::uint8_t byte();
  std::uint64_t varint();
  std::string_view in_;
  std::size_t pos_ = 0;
  std::int16_t last_ = 0;
  std::vector<std::int16_t> stack_;
};

}  // namespace trainio::format::parquet::thrift
