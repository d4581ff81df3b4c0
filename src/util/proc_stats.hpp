#pragma once
// What the storage side saw, where Linux exposes it: bytes this process made the kernel fetch
// from storage (/proc/self/io read_bytes: page-cache misses), and bytes read from the block device
// holding a path (/proc/diskstats, node-wide). Beside the bytes the application read, they tell
// whether an epoch was served by storage or by the page cache.

#include <cstdint>
#include <optional>
#include <string>

namespace trainio::util {

std::optional<std::uint64_t> process_storage_read_bytes();

// The block device under `path` ("vda", "nvme0n1p2"), empty when there is none (tmpfs, NFS).
std::string block_device_of(const std::string& path);

// Bytes read from `device` since boot (sectors read x 512).
std::optional<std::uint64_t> device_read_bytes(const std::string& device);

}  // namespace trainio::util
