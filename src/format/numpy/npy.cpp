#include "format/numpy/npy.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <iterator>

namespace trainio::format::npy {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kArrayAlign = 64;
// numpy >= 1.22 leaves room to grow the first axis in place (format.GROWTH_AXIS_MAX_DIGITS).
constexpr std::size_t kGrowthAxisMaxDigits = 21;

// Python's repr of a tuple, appended to `out`: "()", "(5,)", "(64, 64, 1)".
void append_shape_repr(fmt::memory_buffer& out, std::span<const std::uint64_t> shape) {
  out.push_back('(');
  for (size_t i = 0; i < shape.size(); ++i) fmt::format_to(std::back_inserter(out), "{}{}", i ? ", " : "", shape[i]);
  if (shape.size() == 1) out.push_back(',');
  out.push_back(')');
}

std::size_t item_size_of(std::string_view d) {
  if (d.size() < 3) return 0;
  std::size_t n = 0;
  std::from_chars(d.data() + 2, d.data() + d.size(), n);
  return n;
}

}  // namespace

std::string_view descr(config::ElementType t) {
  using E = config::ElementType;
  switch (t) {
    case E::uint8: return "|u1";
    case E::int8: return "|i1";
    case E::uint16: return "<u2";
    case E::int16: return "<i2";
    case E::uint32: return "<u4";
    case E::int32: return "<i4";
    case E::uint64: return "<u8";
    case E::int64: return "<i8";
    case E::float16: return "<f2";
    case E::float32: return "<f4";
    case E::float64: return "<f8";
  }
  return "|u1";
}

std::string header(config::ElementType dtype, std::span<const std::uint64_t> shape) {
  // Keys in sorted order, each "'key': repr(value), ", as numpy's _write_array_header. Built in
  // a buffer on the stack: one allocation per header (generation makes two per NPZ file).
  fmt::memory_buffer dict;
  fmt::format_to(std::back_inserter(dict), "{{'descr': '{}', 'fortran_order': False, 'shape': ", descr(dtype));
  append_shape_repr(dict, shape);
  fmt::format_to(std::back_inserter(dict), ", }}");
  if (!shape.empty()) {
    const std::size_t first = fmt::formatted_size("{}", shape[0]);
    if (first < kGrowthAxisMaxDigits) fmt::format_to(std::back_inserter(dict), "{:{}}", "", kGrowthAxisMaxDigits - first);
  }
  // Version 1.0 stores the header length in 2 bytes; 2.0 in 4 when it does not fit.
  const std::size_t hlen = dict.size() + 1;  // + '\n'
  bool v2 = false;
  std::size_t prelude = kPreludeV1;
  std::size_t pad = kArrayAlign - ((prelude + hlen) % kArrayAlign);
  if (hlen + pad > 0xffff) {
    v2 = true;
    prelude = 12;
    pad = kArrayAlign - ((prelude + hlen) % kArrayAlign);
  }
  const std::size_t total_len = hlen + pad;
  std::string out;
  out.reserve(prelude + total_len);
  out.append(kMagic, 6);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((total_len >> (8 * i)) & 0xff);
  out.append(dict.data(), dict.size());
  out.append(pad, ' ');
  out += '\n';
  return out;
}

std::uint64_t Header::data_bytes() const {
  std::uint64_t n = item_size;
  for (unsigned i = 0; i < ndims; ++i) n *= shape[i];
  return n;
}

std::optional<Header> parse_header(std::string_view b, std::string* why) {
  auto fail = [&](const char* reason) -> std::optional<Header> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (b.size() < kPreludeV1 || std::memcmp(b.data(), kMagic, 6) != 0) return fail("no NPY magic");
  const unsigned major = static_cast<unsigned char>(b[6]);
  std::size_t len = 0, prelude = 0;
  if (major == 1) {
    len = static_cast<unsigned char>(b[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(b[9])) << 8);
    prelude = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return fail("NPY header cut short");
    for (int i = 0; i < 4; ++i) len |= static_cast<std::size_t>(static_cast<unsigned char>(b[8 + i])) << (8 * i);
    prelude = 12;
  } else {
    return fail("unsupported NPY version");
  }
  if (b.size() < prelude + len) return fail("NPY header cut short");
  const std::string_view dict = b.substr(prelude, len);
  Header h;
  h.header_bytes = prelude + len;
  const auto d = dict.find("'descr': '");
  if (d == std::string_view::npos) return fail("NPY header has no descr");
  const auto d_end = dict.find('\'', d + 10);
  h.descr = std::string(dict.substr(d + 10, d_end - d - 10));
  h.item_size = item_size_of(h.descr);
  if (h.item_size == 0) return fail("NPY descr is not a plain numeric type");
  h.fortran_order = dict.find("'fortran_order': True") != std::string_view::npos;
  const auto s = dict.find("'shape': (");
  if (s == std::string_view::npos) return fail("NPY header has no shape");
  std::size_t pos = s + 10;
  while (pos < dict.size() && dict[pos] != ')') {
    while (pos < dict.size() && (dict[pos] == ' ' || dict[pos] == ',')) ++pos;
    if (pos >= dict.size() || dict[pos] == ')') break;
    std::uint64_t v = 0;
    const auto r = std::from_chars(dict.data() + pos, dict.data() + dict.size(), v);
    if (r.ec != std::errc() || h.ndims >= 8) return fail("NPY shape is malformed");
    h.shape[h.ndims++] = v;
    pos = static_cast<std::size_t>(r.ptr - dict.data());
  }
  return h;
}

}  // namespace trainio::format::npy
