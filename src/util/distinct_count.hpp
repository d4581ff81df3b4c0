#pragma once
// How many distinct values (files) a stream held, estimated with HyperLogLog: 4,096 one-byte
// registers, about 1.6% standard error, whatever the count; estimates merge exactly across
// threads and ranks (register-wise maximum). Counting millions of files this way costs 4 KiB,
// allocated at the first value (most of a run's recorders see none). A finished phase's count
// keeps its estimate only (keep_estimate_only), so that a long run does not keep 4 KiB per phase.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>

namespace trainio::util {

class DistinctCount {
 public:
  static constexpr int kBits = 12;
  static constexpr int kRegisters = 1 << kBits;
  using Registers = std::array<std::uint8_t, kRegisters>;

  DistinctCount() = default;
  DistinctCount(const DistinctCount& other) { *this = other; }
  DistinctCount& operator=(const DistinctCount& other);
  DistinctCount(DistinctCount&&) noexcept = default;
  DistinctCount& operator=(DistinctCount&&) noexcept = default;

  // `hash`: a well-mixed 64-bit hash of the value.
  void add(std::uint64_t hash) {
    Registers& regs = registers();
    const auto index = static_cast<std::size_t>(hash >> (64 - kBits));
    const std::uint64_t rest = (hash << kBits) | (1ULL << (kBits - 1));  // never all zero
    const auto rank = static_cast<std::uint8_t>(__builtin_clzll(rest) + 1);
    if (rank > regs[index]) regs[index] = rank;
  }
  // Merging needs the registers of both: not after keep_estimate_only.
  void merge(const DistinctCount& other);
  double estimate() const;
  // Frees the registers and keeps the estimate.
  void keep_estimate_only();

  // All zero when nothing was added. The writable ones are allocated on first use.
  const Registers& registers() const;
  Registers& registers() {
    if (!registers_) allocate();
    return *registers_;
  }

 private:
  void allocate();
  std::unique_ptr<Registers> registers_;  // none until the first value
  std::optional<double> kept_;            // after keep_estimate_only
};

}  // namespace trainio::util
