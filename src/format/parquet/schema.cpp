#include "format/parquet/schema.hpp"

#include <algorithm>

namespace trainio::format::parquet {

using config::ElementType;

namespace {

// ConvertedType codes of the integer annotations.
constexpr std::int32_t kUint8 = 11, kInt8 = 15;

void set_physical(Column& c) {
  c.element_bytes = config::element_size(c.dtype);
  switch (c.dtype) {
    case ElementType::uint8:
    case ElementType::int8:
    case ElementType::uint16:
    case ElementType::int16:
    case ElementType::uint32:
    case ElementType::int32: c.physical = PhysicalType::int32; c.value_bytes = 4; break;
    case ElementType::uint64:
    case ElementType::int64: c.physical = PhysicalType::int64; c.value_bytes = 8; break;
    case ElementType::float16: c.physical = PhysicalType::fixed_len_byte_array; c.value_bytes = 2; break;
    case ElementType::float32: c.physical = PhysicalType::float32; c.value_bytes = 4; break;
    case ElementType::float64: c.physical = PhysicalType::float64; c.value_bytes = 8; break;
  }
}

// The leaf's annotations, as pyarrow writes them for the Arrow type.
void annotate(SchemaNode& n, ElementType t) {
  auto integer = [&](int bits, bool is_signed) {
    n.logical = SchemaNode::Logical::integer;
    n.bit_width = bits;
    n.is_signed = is_signed;
    const int step = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3;
    n.converted_type = (is_signed ? kInt8 : kUint8) + step;
  };
  switch (t) {
    case ElementType::uint8: integer(8, false); break;
    case ElementType::int8: integer(8, true); break;
    case ElementType::uint16: integer(16, false); break;
    case ElementType::int16: integer(16, true); break;
    case ElementType::uint32: integer(32, false); break;
    case ElementType::uint64: integer(64, false); break;
    case ElementType::float16: n.logical = SchemaNode::Logical::float16; n.type_length = 2; break;
    default: break;  // int32, int64, float, double: the physical type says it all
  }
}

}  // namespace

std::vector<std::string> Column::path() const {
  if (list) return {name, "list", "element"};
  return {name};
}

std::vector<Column> columns_of(const config::Workload& w, std::uint64_t sample_elements) {
  std::vector<Column> out;
  const auto& chosen = w.storage.storage_options.columns;
  auto chosen_has = [&](const std::string& n) { return chosen.empty() || std::find(chosen.begin(), chosen.end(), n) != chosen.end(); };
  if (w.dataset.parquet.columns.empty()) {
    Column c;
    c.name = "data";
    c.dtype = ElementType::uint8;
    c.size = std::max<std::uint64_t>(sample_elements, 1);
    c.list = true;  // the fork writes pa.list_(pa.uint8(), n) even for n = 1
    c.read = chosen_has(c.name);
    set_physical(c);
    out.push_back(c);
    return out;
  }
  for (const auto& spec : w.dataset.parquet.columns) {
    Column c;
    c.name = spec.name;
    c.dtype = spec.dtype;
    c.size = spec.size;
    c.list = spec.size > 1;
    c.read = spec.read && chosen_has(spec.name);
    set_physical(c);
    out.push_back(c);
  }
  return out;
}

Schema schema_of(const config::Workload& w, const plan::DataFile& file) {
  Schema s;
  s.columns = columns_of(w, file.sample.bytes());
  s.row_group_rows = static_cast<std::uint64_t>(w.dataset.parquet.row_group_size);
  switch (w.dataset.compression) {
    case config::Compression::gzip: s.codec = Codec::gzip; break;
    case config::Compression::zstd: s.codec = Codec::zstd; break;
    default: s.codec = Codec::uncompressed;
  }
  s.codec_level = static_cast<int>(w.dataset.compression_level);
  s.statistics = w.dataset.parquet.write_statistics;
  s.page_version = static_cast<int>(w.dataset.parquet.data_page_version);
  return s;
}

std::vector<SchemaNode> Schema::nodes() const {
  std::vector<SchemaNode> out;
  SchemaNode root;
  root.name = "schema";
  root.num_children = static_cast<std::int32_t>(columns.size());
  out.push_back(root);
  for (const auto& c : columns) {
    SchemaNode leaf;
    leaf.type = static_cast<std::int32_t>(c.physical);
    leaf.repetition = static_cast<std::int32_t>(Repetition::required);
    annotate(leaf, c.dtype);
    if (!c.list) {
      leaf.name = c.name;
      out.push_back(leaf);
      continue;
    }
    // The standard three-level LIST: required group <name> (LIST) { repeated group list { required element } }.
    SchemaNode group;
    group.name = c.name;
    group.repetition = static_cast<std::int32_t>(Repetition::required);
    group.num_children = 1;
    group.converted_type = kConvertedList;
    group.logical = SchemaNode::Logical::list;
    SchemaNode repeated;
    repeated.name = "list";
    repeated.repetition = static_cast<std::int32_t>(Repetition::repeated);
    repeated.num_children = 1;
    leaf.name = "element";
    out.push_back(group);
    out.push_back(repeated);
    out.push_back(leaf);
  }
  return out;
}

std::uint64_t Schema::row_bytes() const {
  std::uint64_t n = 0;
  for (const auto& c : columns) n += c.row_bytes();
  return n;
}

std::uint64_t Schema::projected_row_bytes() const {
  std::uint64_t n = 0;
  for (const auto& c : columns)
    if (c.read) n += c.row_bytes();
  return n;
}

std::uint64_t rows_per_page(const Column& c) {
  return std::clamp<std::uint64_t>(kPageBytes / std::max<std::uint64_t>(c.row_bytes(), 1), 1, kPageRows);
}

}  // namespace trainio::format::parquet
