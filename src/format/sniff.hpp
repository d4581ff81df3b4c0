#pragma once
// Which dataset format a file is, from its first bytes (the magic numbers the writers in this
// folder write), for `trainio capture` to name the format of a traced job's files.

#include <optional>
#include <string_view>

#include "config/enums.hpp"

namespace trainio::format {

// How many first bytes sniff() wants (tar's magic sits at byte 257).
inline constexpr std::size_t kSniffBytes = 512;

// The format `head` (a file's first bytes, up to kSniffBytes) begins as, or nullopt. A ZIP is npz
// only when it holds a .npy member (PyTorch's checkpoints are ZIPs too); a TFRecord is recognised by
// the masked CRC-32C of its first length field.
std::optional<config::Format> sniff(std::string_view head);

}  // namespace trainio::format
