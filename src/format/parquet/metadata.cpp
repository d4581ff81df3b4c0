#include "format/parquet/metadata.hpp"

#include "format/parquet/thrift.hpp"

namespace trainio::format::parquet {

using thrift::Type;

namespace {

void write_statistics(thrift::Writer& w, std::int16_t id, const Statistics& s) {
  w.begin_struct(id);
  w.field_i64(3, 0);  // null_count: every value is present
  if (s.has_min_max) {
    w.field_binary(5, s.max_value);
    w.field_binary(6, s.min_value);
  }
  w.end_struct();
}

void write_schema_node(thrift::Writer& w, const SchemaNode& n) {
  w.begin_list_struct();
  if (n.type >= 0) w.field_i32(1, n.type);
  if (n.type_length > 0) w.field_i32(2, n.type_length);
  if (n.repetition >= 0) w.field_i32(3, n.repetition);
  w.field_binary(4, n.name);
  if (n.num_children > 0) w.field_i32(5, n.num_children);
  if (n.converted_type >= 0) w.field_i32(6, n.converted_type);
  if (n.logical != SchemaNode::Logical::none) {
    w.begin_struct(10);  // LogicalType, a union
    switch (n.logical) {
      case SchemaNode::Logical::list:
        w.begin_struct(3);
        w.end_struct();
        break;
      case SchemaNode::Logical::integer:
        w.begin_struct(10);
        w.field_i8(1, static_cast<std::int8_t>(n.bit_width));  // an i8 in the IDL: one raw byte
        w.field_bool(2, n.is_signed);
        w.end_struct();
        break;
      case SchemaNode::Logical::float16:
        w.begin_struct(15);
        w.end_struct();
        break;
      default: break;
    }
    w.end_struct();
  }
  w.end_struct();
}

void write_column(thrift::Writer& w, const ColumnChunkMeta& c) {
  w.begin_list_struct();
  w.field_i64(2, c.data_page_offset);  // file_offset: deprecated, readers use the metadata's offsets
  w.begin_struct(3);
  w.field_i32(1, static_cast<std::int32_t>(c.type));
  w.begin_list(2, Type::i32, 2);
  w.list_i32(kPlain);
  w.list_i32(kRle);
  w.begin_list(3, Type::binary, c.path.size());
  for (const auto& p : c.path) w.list_binary(p);
  w.field_i32(4, static_cast<std::int32_t>(c.codec));
  w.field_i64(5, c.num_values);
  w.field_i64(6, c.total_uncompressed_size);
  w.field_i64(7, c.total_compressed_size);
  w.field_i64(9, c.data_page_offset);
  if (c.dictionary_page_offset > 0) w.field_i64(11, c.dictionary_page_offset);
  if (c.has_statistics) write_statistics(w, 12, c.statistics);
  w.end_struct();
  w.end_struct();
}

}  // namespace

std::string encode_file_meta(const FileMeta& m) {
  std::string out;
  thrift::Writer w(out);
  w.field_i32(1, m.version);
  w.begin_list(2, Type::strct, m.schema.size());
  for (const auto& n : m.schema) write_schema_node(w, n);
  w.field_i64(3, m.num_rows);
  w.begin_list(4, Type::strct, m.row_groups.size());
  for (const auto& rg : m.row_groups) {
    w.begin_list_struct();
    w.begin_list(1, Type::strct, rg.columns.size());
    for (const auto& c : rg.columns) write_column(w, c);
    w.field_i64(2, rg.total_byte_size);
    w.field_i64(3, rg.num_rows);
    w.end_struct();
  }
  if (!m.created_by.empty()) w.field_binary(6, m.created_by);
  w.stop();
  return out;
}

namespace {

SchemaNode read_schema_node(thrift::Reader& r) {
  SchemaNode n;
  r.enter_struct();
  std::int16_t id;
  Type t;
  while (r.next_field(id, t)) {
    switch (id) {
      case 1: n.type = static_cast<std::int32_t>(r.read_int(t)); break;
      case 2: n.type_length = static_cast<std::int32_t>(r.read_int(t)); break;
      case 3: n.repetition = static_cast<std::int32_t>(r.read_int(t)); break;
      case 4: n.name = std::string(r.read_binary()); break;
      case 5: n.num_children = static_cast<std::int32_t>(r.read_int(t)); break;
      case 6: n.converted_type = static_cast<std::int32_t>(r.read_int(t)); break;
      case 10: {
        if (t != Type::strct) throw thrift::ThriftError("a logical type that is not a struct");
        r.enter_struct();
        std::int16_t lid;
        Type lt;
        while (r.next_field(lid, lt)) {
          if (lid == 3) n.logical = SchemaNode::Logical::list;
          else if (lid == 15) n.logical = SchemaNode::Logical::float16;
          else if (lid == 10 && lt == Type::strct) {
            n.logical = SchemaNode::Logical::integer;
            r.enter_struct();
            std::int16_t iid;
            Type it;
            while (r.next_field(iid, it)) {
              if (iid == 1) n.bit_width = static_cast<std::int32_t>(r.read_int(it));
              else if (iid == 2) n.is_signed = r.read_bool(it);
              else r.skip(it);
            }
            continue;
          } else n.logical = SchemaNode::Logical::other;
          r.skip(lt);
        }
        break;
      }
      default: r.skip(t);
    }
  }
  return n;
}

ColumnChunkMeta read_column(thrift::Reader& r) {
  ColumnChunkMeta c;
  bool has_meta = false;
  r.enter_struct();
  std::int16_t id;
  Type t;
  while (r.next_field(id, t)) {
    if (id != 3 || t != Type::strct) {
      r.skip(t);
      continue;
    }
    has_meta = true;
    r.enter_struct();
    std::int16_t mid;
    Type mt;
    while (r.next_field(mid, mt)) {
      switch (mid) {
        case 1: c.type = static_cast<PhysicalType>(r.read_int(mt)); break;
        case 4: c.codec = static_cast<Codec>(r.read_int(mt)); break;
        case 5: c.num_values = r.read_int(mt); break;
        case 6: c.total_uncompressed_size = r.read_int(mt); break;
        case 7: c.total_compressed_size = r.read_int(mt); break;
        case 9: c.data_page_offset = r.read_int(mt); break;
        case 11: c.dictionary_page_offset = r.read_int(mt); break;
        default: r.skip(mt);  // encodings, path, statistics: not needed to find the bytes
      }
    }
  }
  if (!has_meta) throw thrift::ThriftError("a column chunk without its metadata (file_path chunks are not supported)");
  return c;
}

}  // namespace

FileMeta decode_file_meta(std::string_view bytes) {
  FileMeta m;
  thrift::Reader r(bytes);
  std::int16_t id;
  Type t;
  while (r.next_field(id, t)) {
    switch (id) {
      case 1: m.version = static_cast<std::int32_t>(r.read_int(t)); break;
      case 2: {
        Type e;
        const std::uint64_t n = r.read_list(e);
        if (e != Type::strct) throw thrift::ThriftError("a schema that is not a list of structs");
        m.schema.reserve(n);
        for (std::uint64_t i = 0; i < n; ++i) m.schema.push_back(read_schema_node(r));
        break;
      }
      case 3: m.num_rows = r.read_int(t); break;
      case 4: {
        Type e;
        const std::uint64_t n = r.read_list(e);
        if (e != Type::strct) throw thrift::ThriftError("row groups that are not a list of structs");
        m.row_groups.reserve(n);
        for (std::uint64_t i = 0; i < n; ++i) {
          RowGroupMeta rg;
          r.enter_struct();
          std::int16_t gid;
          Type gt;
          while (r.next_field(gid, gt)) {
            if (gid == 1) {
              Type ce;
              const std::uint64_t nc = r.read_list(ce);
              if (ce != Type::strct) throw thrift::ThriftError("column chunks that are not structs");
              rg.columns.reserve(nc);
              for (std::uint64_t k = 0; k < nc; ++k) rg.columns.push_back(read_column(r));
            } else if (gid == 2) {
              rg.total_byte_size = r.read_int(gt);
            } else if (gid == 3) {
              rg.num_rows = r.read_int(gt);
            } else {
              r.skip(gt);
            }
          }
          m.row_groups.push_back(std::move(rg));
        }
        break;
      }
      case 6: m.created_by = std::string(r.read_binary()); break;
      default: r.skip(t);
    }
  }
  return m;
}

void append_page_header(std::string& out, const PageHeader& h) {
  thrift::Writer w(out);
  w.field_i32(1, static_cast<std::int32_t>(h.type));
  w.field_i32(2, h.uncompressed_page_size);
  w.field_i32(3, h.compressed_page_size);
  if (h.type == PageType::data_page) {
    w.begin_struct(5);
    w.field_i32(1, h.num_values);
    w.field_i32(2, h.encoding);
    w.field_i32(3, kRle);
    w.field_i32(4, kRle);
    w.end_struct();
  } else if (h.type == PageType::data_page_v2) {
    w.begin_struct(8);
    w.field_i32(1, h.num_values);
    w.field_i32(2, 0);  // num_nulls
    w.field_i32(3, h.num_rows);
    w.field_i32(4, h.encoding);
    w.field_i32(5, h.definition_levels_byte_length);
    w.field_i32(6, h.repetition_levels_byte_length);
    w.field_bool(7, h.is_compressed);
    w.end_struct();
  }
  w.stop();
}

PageHeader decode_page_header(std::string_view bytes, std::size_t& consumed) {
  PageHeader h;
  thrift::Reader r(bytes);
  std::int16_t id;
  Type t;
  bool type_seen = false;
  while (r.next_field(id, t)) {
    switch (id) {
      case 1: h.type = static_cast<PageType>(r.read_int(t)); type_seen = true; break;
      case 2: h.uncompressed_page_size = static_cast<std::int32_t>(r.read_int(t)); break;
      case 3: h.compressed_page_size = static_cast<std::int32_t>(r.read_int(t)); break;
      case 5:
      case 7:
      case 8: {
        if (t != Type::strct) throw thrift::ThriftError("a page header part that is not a struct");
        r.enter_struct();
        std::int16_t pid;
        Type pt;
        while (r.next_field(pid, pt)) {
          if (pid == 1) h.num_values = static_cast<std::int32_t>(r.read_int(pt));
          else if (pid == 2 && id != 8) h.encoding = static_cast<std::int32_t>(r.read_int(pt));
          else if (id == 8 && pid == 3) h.num_rows = static_cast<std::int32_t>(r.read_int(pt));
          else if (id == 8 && pid == 4) h.encoding = static_cast<std::int32_t>(r.read_int(pt));
          else if (id == 8 && pid == 5) h.definition_levels_byte_length = static_cast<std::int32_t>(r.read_int(pt));
          else if (id == 8 && pid == 6) h.repetition_levels_byte_length = static_cast<std::int32_t>(r.read_int(pt));
          else if (id == 8 && pid == 7) h.is_compressed = r.read_bool(pt);
          else r.skip(pt);
        }
        break;
      }
      default: r.skip(t);
    }
  }
  if (!type_seen) throw thrift::ThriftError("a page header without a page type");
  if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0) throw thrift::ThriftError("a negative page size");
  consumed = r.position();
  return h;
}

}  // namespace trainio::format::parquet
