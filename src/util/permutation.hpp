#pragma once
// A seeded pseudo-random permutation of [0, n) evaluated point by point in O(1) time and memory.
// Epoch plans use it so that shuffling 277 million samples needs no 2 GiB index array per rank:
// the k-th sample of an epoch is computed when it is needed. Bijectivity makes "every sample
// exactly once" hold by construction.

#include <cstdint>

namespace trainio::util {

class Permutation {
 public:
  Permutation() = default;  // identity on an empty domain; assign a real one before use
  Permutation(std::uint64_t n, std::uint64_t seed);

  std::uint64_t size() const { return n_; }
  std::uint64_t operator()(std::uint64_t index) const;

  // A caller's memory of its last answer: a reader walking a file's samples asks for the same
  // file position many times in a row, and each evaluation costs tens of nanoseconds (a tenth of
  // a DLRM epoch's CPU on a hot page cache). Caller-owned, so threads share no state; it answers
  // only for the permutation that filled it (its first key and size determine all of it).
  struct Memo {
    std::uint64_t key = 0, n = 0, index = ~0ULL, value = 0;
  };
  std::uint64_t operator()(std::uint64_t index, Memo& memo) const {
    if (memo.index != index || memo.key != keys_[0] || memo.n != n_) memo = {keys_[0], n_, index, (*this)(index)};
    return memo.value;
  }

 private:
  std::uint64_t feistel(std::uint64_t x) const;

  static constexpr int kRounds = 4;
  std::uint64_t n_ = 0;
  int half_bits_ = 0;
  std::uint64_t half_mask_ = 0;
  std::uint64_t keys_[kRounds] = {};
};

}  // namespace trainio::util
