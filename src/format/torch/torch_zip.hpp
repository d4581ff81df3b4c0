#pragma once
// The ZIP constants of PyTorch's archive writer (miniz, as PyTorch configures it), shared by the
// archive's layout (torch_file.cpp) and torch.save/torch.load (torch_io.cpp).

#include <cstddef>
#include <cstdint>

namespace trainio::format::torch {

inline constexpr std::uint64_t kMax32 = 0xFFFFFFFFULL;  // MZ_UINT32_MAX
inline constexpr std::size_t kAlignment = 64;           // PyTorch's kFieldAlignment
inline constexpr std::size_t kDescriptor32 = 16, kDescriptor64 = 24;
inline constexpr std::size_t kZip64EndSize = 56, kLocatorSize = 20, kEndSize = 22;

}  // namespace trainio::format::torch
