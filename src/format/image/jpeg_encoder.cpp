// A baseline grayscale JPEG of an exact size (ITU T.81): the headers Pillow writes for an 8-bit
// grayscale image at quality 75, then coded data whose length is steered block by block.
// Every block's coded cost in bits is chosen before it is drawn (the remaining budget over the
// remaining blocks), and a table of the costs the rest of a block can still reach keeps each
// random choice completable, so the last block lands the file on the planned size exactly.

#include <algorithm>
#include <array>
#include <csetjmp>
#include <cstddef>
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <cstring>
#include <memory>

#include <jpeglib.h>

#include "format/format.hpp"
#include "format/image/image_encode.hpp"
#include "util/error.hpp"

namespace trainio::format {

namespace {

// SOI, APP0 (JFIF), DQT, SOF0, DHT (DC), DHT (AC), SOS: what libjpeg writes before the coded data
// of a one-component image with the standard tables; EOI after it.
constexpr std::uint64_t kHeaderBytes = 2 + 18 + 69 + 13 + 33 + 183 + 10;
constexpr std::uint64_t kEoiBytes = 2;
constexpr unsigned kLastPosition = 62;  // coefficients 1..62 are coded; every block ends with EOB
constexpr unsigned kMinBlockBits = 6;   // DC difference 0 and EOB

std::uint64_t blocks_of(ImageSize size) { return ((size.height + 7) / 8) * ((size.width + 7) / 8); }

// Zigzag position -> row-major index within the 8x8 block.
std::array<unsigned, 64> zigzag_order() {
  std::array<unsigned, 64> order{};
  unsigned k = 0;
  for (unsigned s = 0; s < 15; ++s) {
    const unsigned lo = s > 7 ? s - 7 : 0, hi = s < 7 ? s : 7;
    for (unsigned i = 0; i <= hi - lo; ++i) {
      const unsigned row = s % 2 == 0 ? hi - i : lo + i;
      order[k++] = row * 8 + (s - row);
    }
  }
  return order;
}

unsigned bit_length(unsigned v) {
  unsigned n = 0;
  for (; v; v >>= 1) ++n;
  return n;
}

struct HuffmanCode {
  std::array<std::uint16_t, 256> code{};
  std::array<std::uint8_t, 256> length{};  // 0: the symbol has no code
};

// Canonical codes from a DHT's counts per length and symbols (T.81 Annex C).
HuffmanCode codes_of(const JHUFF_TBL& t) {
  HuffmanCode h;
  unsigned code = 0, at = 0;
  for (unsigned len = 1; len <= 16; ++len) {
    for (unsigned i = 0; i < t.bits[len]; ++i, ++at) {
      h.code[t.huffval[at]] = static_cast<std::uint16_t>(code++);
      h.length[t.huffval[at]] = static_cast<std::uint8_t>(len);
    }
    code <<= 1;
  }
  return h;
}

struct LibjpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
};

[[noreturn]] void libjpeg_fail(j_common_ptr info) { std::longjmp(reinterpret_cast<LibjpegError*>(info->err)->jump, 1); }

// Bits into bytes, 0xFF followed by a stuffed 0x00, padding with 1-bits (as libjpeg does). Writes
// into a buffer sized in advance; whole 32-bit words go out at once when none of their bytes is
// 0xFF (the common case: random data has one in 256).
struct BitSink {
  unsigned char* out = nullptr;
  std::size_t at = 0;   // bytes written
  std::uint64_t acc = 0;
  unsigned count = 0;   // bits in acc, < 32 between calls
  void put(std::uint32_t bits, unsigned length) {  // length <= 32
    acc = (acc << length) | (bits & static_cast<std::uint32_t>((1ull << length) - 1));
    count += length;
    if (count < 32) return;
    count -= 32;
    const auto word = static_cast<std::uint32_t>(acc >> count);
    acc &= (1ull << count) - 1;
    // A byte of `word` is 0xFF exactly when the same byte of ~word is zero.
    const std::uint32_t inverse = ~word;
    if (((inverse - 0x01010101u) & ~inverse & 0x80808080u) == 0) {
      out[at] = static_cast<unsigned char>(word >> 24);
      out[at + 1] = static_cast<unsigned char>(word >> 16);
      out[at + 2] = static_cast<unsigned char>(word >> 8);
      out[at + 3] = static_cast<unsigned char>(word);
      at += 4;
      return;
    }
    for (int shift = 24; shift >= 0; shift -= 8) byte(static_cast<unsigned char>(word >> shift));
  }
  void byte(unsigned char b) {
    out[at++] = b;
    if (b == 0xFF) out[at++] = 0;
  }
  // The bits still held, as whole bytes padded with 1-bits.
  void flush() {
    if (count % 8) put(0x7F, 8 - count % 8);
    while (count >= 8) {
      count -= 8;
      byte(static_cast<unsigned char>(acc >> count));
    }
    acc = 0;
  }
  // Bytes written so far if the held bits were flushed now, stuffing aside.
  std::int64_t bits_written() const { return 8 * static_cast<std::int64_t>(at) + count; }
};

// Random bits from the file's content stream.
class Draw {
 public:
  explicit Draw(ContentSource& content) : content_(content) {}
  std::uint32_t bits(unsigned n) {  // n <= 32
    if (left_ < n) {
      if (at_ == pool_.size()) {
        content_.fill(pool_.data(), pool_.size() * sizeof(std::uint64_t));
        at_ = 0;
      }
      word_ = pool_[at_++];
      left_ = 64;
    }
    const auto v = static_cast<std::uint32_t>(n == 32 ? word_ : word_ & ((1ull << n) - 1));
    word_ >>= n % 64;
    left_ -= n;
    return v;
  }

 private:
  ContentSource& content_;
  std::array<std::uint64_t, 512> pool_{};
  std::size_t at_ = pool_.size();
  std::uint64_t word_ = 0;
  unsigned left_ = 0;
};

}  // namespace

struct JpegEncoder::Tables {
  std::array<std::uint8_t, 64> quant{};  // zigzag order, as DQT holds it
  JHUFF_TBL dc_table{}, ac_table{};
  HuffmanCode dc, ac;
  std::array<unsigned, 64> max_size{};   // largest magnitude category at each zigzag position
  // A random byte -> a magnitude category at each position, weighted to the larger ones.
  std::array<std::array<std::uint8_t, 256>, 64> pick{};
  unsigned dc_max = 0;                   // |quantized DC| bound
  unsigned dc_categories = 0;            // DC differences of categories 0..dc_categories
  unsigned max_ac_bits = 0;              // the most coefficients 1..62 can cost
  // reach[k * (max_ac_bits + 1) + r]: coefficients k..62 can cost exactly r bits (k = 63: none).
  std::vector<std::uint8_t> reach;
  std::vector<std::uint8_t> block_ok;    // a whole block can cost exactly this many bits
  unsigned max_block_bits = 0;

  unsigned ac_cost(unsigned symbol) const { return ac.length[symbol] + (symbol & 15u); }
  unsigned dc_cost(unsigned category) const { return dc.length[category] + category; }
  bool can_reach(unsigned k, std::int64_t r) const {
    return r >= 0 && r <= static_cast<std::int64_t>(max_ac_bits) &&
           reach[k * (max_ac_bits + 1) + static_cast<unsigned>(r)];
  }
};

JpegEncoder::JpegEncoder() : tables_(std::make_unique<Tables>()) {
  Tables& t = *tables_;
  // The tables libjpeg (and so Pillow) writes by default, taken from libjpeg itself.
  jpeg_compress_struct c{};
  LibjpegError err{};
  c.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = libjpeg_fail;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&c);
    throw internal_error("libjpeg failed to set up its default tables");
  }
  jpeg_create_compress(&c);
  c.in_color_space = JCS_GRAYSCALE;
  c.input_components = 1;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 75, TRUE);
  const auto order = zigzag_order();
  for (unsigned k = 0; k < 64; ++k) t.quant[k] = static_cast<std::uint8_t>(c.quant_tbl_ptrs[0]->quantval[order[k]]);
  t.dc_table = *c.dc_huff_tbl_ptrs[0];
  t.ac_table = *c.ac_huff_tbl_ptrs[0];
  jpeg_destroy_compress(&c);
  t.dc = codes_of(t.dc_table);
  t.ac = codes_of(t.ac_table);
  // Quantized coefficients stay within what 8-bit samples give: |value x quant| <= 1023.
  for (unsigned k = 1; k < 64; ++k) {
    unsigned s = 1;
    while (s < 10 && ((2u << s) - 1) * t.quant[k] <= 1023 && t.ac.length[s + 1] > 0) ++s;
    t.max_size[k] = s;
  }
  // Category s drawn with weight s (1 + 2 + ... over 1..max): larger values, fewer codes per
  // block, more of the coded bits random.
  for (unsigned k = 1; k < 64; ++k) {
    const unsigned m = t.max_size[k], total = m * (m + 1) / 2;
    for (unsigned r = 0; r < 256; ++r) {
      unsigned s = 1, upto = 1, slot = r * total / 256;
      while (slot >= upto) upto += ++s;
      t.pick[k][r] = static_cast<std::uint8_t>(s);
    }
  }
  t.dc_max = 1016 / t.quant[0];
  t.dc_categories = bit_length(t.dc_max);
  for (unsigned k = 1; k <= kLastPosition; ++k) t.max_ac_bits += t.ac_cost(t.max_size[k]);
  const unsigned width = t.max_ac_bits + 1;
  t.reach.assign(64 * width, 0);
  t.reach[63 * width] = 1;
  for (unsigned k = kLastPosition; k >= 1; --k) {
    std::uint8_t* row = &t.reach[k * width];
    row[0] = 1;
    for (unsigned r = 1; r < width; ++r) {
      bool ok = false;
      for (unsigned s = 1; s <= t.max_size[k] && !ok; ++s) ok = t.can_reach(k + 1, std::int64_t(r) - t.ac_cost(s));
      // A zero then a +-1 (run 1, size 1).
      if (!ok && k < kLastPosition) ok = t.can_reach(k + 2, std::int64_t(r) - t.ac_cost(0x11));
      row[r] = ok;
    }
  }
  const unsigned dc_categories = t.dc_categories;
  t.max_block_bits = t.dc_cost(dc_categories) + t.max_ac_bits + t.ac_cost(0x00);
  t.block_ok.assign(t.max_block_bits + 1, 0);
  for (unsigned bits = 0; bits <= t.max_block_bits; ++bits)
    for (unsigned cat = 0; cat <= dc_categories; ++cat)
      if (t.can_reach(1, std::int64_t(bits) - t.dc_cost(cat) - t.ac_cost(0x00))) t.block_ok[bits] = 1;
}

JpegEncoder::~JpegEncoder() = default;

std::uint64_t jpeg_min_bytes(ImageSize size) {
  // Every block at its least, and a byte to spare for the last block's padding.
  return kHeaderBytes + kEoiBytes + (blocks_of(size) * kMinBlockBits + 7) / 8 + 1;
}

namespace {

// The headers, written at the front of `out` (kHeaderBytes long).
void write_headers(const JpegEncoder::Tables& t, ImageSize size, unsigned char* out) {
  unsigned char* p = out;
  auto bytes = [&](std::initializer_list<unsigned> values) {
    for (const unsigned v : values) *p++ = static_cast<unsigned char>(v);
  };
  auto u16 = [&](std::uint64_t v) { bytes({static_cast<unsigned>(v >> 8) & 0xFF, static_cast<unsigned>(v) & 0xFF}); };
  bytes({0xFF, 0xD8});                                      // SOI
  bytes({0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00,  // APP0: JFIF 1.01, no units, 1:1
         0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00});
  bytes({0xFF, 0xDB, 0x00, 67, 0x00});                      // DQT: 8-bit table 0
  for (const std::uint8_t q : t.quant) *p++ = q;
  bytes({0xFF, 0xC0, 0x00, 11, 8});                         // SOF0: 8-bit samples
  u16(size.height);
  u16(size.width);
  bytes({1, 1, 0x11, 0});                                   // one component: id 1, 1x1, table 0
  for (const auto& [table, cls] : {std::pair{&t.dc_table, 0x00u}, std::pair{&t.ac_table, 0x10u}}) {
    unsigned symbols = 0;
    for (unsigned len = 1; len <= 16; ++len) symbols += table->bits[len];
    bytes({0xFF, 0xC4});                                    // DHT
    u16(2 + 1 + 16 + symbols);
    *p++ = static_cast<unsigned char>(cls);
    for (unsigned len = 1; len <= 16; ++len) *p++ = table->bits[len];
    for (unsigned i = 0; i < symbols; ++i) *p++ = table->huffval[i];
  }
  bytes({0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00});  // SOS: all 64 coefficients
  if (p != out + kHeaderBytes) throw internal_error("JPEG headers of an unexpected length");
}

// One block whose coded cost is exactly `bits` (t.block_ok[bits]).
void put_block(const JpegEncoder::Tables& t, unsigned bits, int& dc, Draw& draw, BitSink& sink) {
  // The DC difference: a random category whose cost leaves a reachable remainder for the rest,
  // its sign towards zero so that the DC value stays within +-dc_max.
  const unsigned categories = t.dc_categories + 1;
  const unsigned eob = t.ac_cost(0x00);
  unsigned cat = draw.bits(4) % categories;
  for (unsigned tries = 0; !t.can_reach(1, std::int64_t(bits) - t.dc_cost(cat) - eob); ++tries) {
    if (tries == categories) throw internal_error("JPEG block cost out of reach");
    cat = (cat + 1) % categories;
  }
  sink.put(t.dc.code[cat], t.dc.length[cat]);
  if (cat > 0) {
    const unsigned low = 1u << (cat - 1), high = std::min((2u << (cat - 1)) - 1, t.dc_max);
    const unsigned magnitude = low + draw.bits(cat) % (high - low + 1);
    const int diff = dc >= 0 ? -static_cast<int>(magnitude) : static_cast<int>(magnitude);
    dc += diff;
    // T.81 F.1.2.1: a negative difference is coded as its ones' complement in `cat` bits.
    sink.put(static_cast<std::uint32_t>(diff > 0 ? diff : diff - 1), cat);
  }
  std::int64_t left = std::int64_t(bits) - t.dc_cost(cat) - eob;
  for (unsigned k = 1; left > 0;) {
    // A random magnitude category (mostly the larger ones: fewer, denser codes), else the nearest
    // one to it that keeps the rest reachable.
    const unsigned start = t.pick[k][draw.bits(8)];
    unsigned size = 0;
    if (t.can_reach(k + 1, left - t.ac_cost(start))) size = start;
    for (unsigned d = 1; d < t.max_size[k] && size == 0; ++d) {
      if (start > d && t.can_reach(k + 1, left - t.ac_cost(start - d))) size = start - d;
      else if (start + d <= t.max_size[k] && t.can_reach(k + 1, left - t.ac_cost(start + d))) size = start + d;
    }
    if (size > 0) {
      // The code, then any `size` bits: they are a value of that category.
      sink.put((std::uint32_t(t.ac.code[size]) << size) | draw.bits(size), t.ac.length[size] + size);
      left -= t.ac_cost(size);
      ++k;
    } else if (k < kLastPosition && t.can_reach(k + 2, left - t.ac_cost(0x11))) {
      sink.put((std::uint32_t(t.ac.code[0x11]) << 1) | draw.bits(1), t.ac.length[0x11] + 1u);
      left -= t.ac_cost(0x11);
      k += 2;
    } else {
      throw internal_error("JPEG block cost out of reach");
    }
  }
  sink.put(t.ac.code[0x00], t.ac.length[0x00]);
}

}  // namespace

void JpegEncoder::encode(ImageSize size, std::uint64_t bytes, ContentSource& content, std::vector<unsigned char>& out) {
  const Tables& t = *tables_;
  if (bytes < jpeg_min_bytes(size))
    throw internal_error("a JPEG of " + std::to_string(bytes) + " bytes is below the least its size allows");
  const std::uint64_t start = kHeaderBytes;
  const std::uint64_t budget = bytes - kHeaderBytes - kEoiBytes;  // coded bytes, stuffing and padding included
  // Room for the coded data and what a last block tried and undone can overshoot.
  out.resize(start + budget + 2 * (t.max_block_bits / 8 + 8));
  write_headers(t, size, out.data());
  const std::uint64_t blocks = blocks_of(size);
  Draw draw(content);
  BitSink sink{out.data() + start};
  int dc = 0;
  auto bits_left = [&] { return 8 * static_cast<std::int64_t>(budget) - sink.bits_written(); };
  for (std::uint64_t b = 0; b + 1 < blocks; ++b) {
    std::int64_t share = bits_left() / static_cast<std::int64_t>(blocks - b);
    share = std::clamp<std::int64_t>(share, kMinBlockBits, t.max_block_bits);
    while (!t.block_ok[static_cast<std::size_t>(share)]) --share;
    put_block(t, static_cast<unsigned>(share), dc, draw, sink);
    // Stuffed bytes the shares could not absorb: never seen with random data (1 byte in 256).
    if (sink.at > budget) throw internal_error("a JPEG's coded data outgrew its planned size");
  }
  // The last block: a cost that ends the coded data on the budget's last byte once padded. A
  // 0xFF in its bytes adds a stuffed byte: then aim a byte shorter, or draw again.
  const BitSink saved = sink;
  const int dc_before = dc;
  for (unsigned attempt = 0;; ++attempt) {
    if (attempt == 48) throw internal_error("could not land a JPEG on its planned size");
    const std::int64_t aim = bits_left() - 8 * static_cast<std::int64_t>(attempt / 16);
    std::int64_t cost = std::min<std::int64_t>(aim - (attempt % 16) / 2, t.max_block_bits);
    while (cost >= kMinBlockBits && !t.block_ok[static_cast<std::size_t>(cost)]) --cost;
    if (cost < kMinBlockBits || cost <= aim - 8) continue;  // no cost fills that byte count
    put_block(t, static_cast<unsigned>(cost), dc, draw, sink);
    sink.flush();
    if (sink.at == budget) break;
    sink = saved;
    dc = dc_before;
  }
  out.resize(bytes);
  out[bytes - 2] = 0xFF;  // EOI
  out[bytes - 1] = 0xD9;
}

}  // namespace trainio::format
