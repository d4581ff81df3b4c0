#pragma once
// The closed sets of values a workload key may take, with DLIO's spellings.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace trainio::config {

enum class Framework { tensorflow, pytorch };
enum class Format {
  tfrecord, hdf5, csv, npz, npy, jpeg, png, indexed_binary, mmap_indexed_binary, synthetic, tar, parquet,
};
enum class DataLoader { tensorflow, pytorch, dali, native_dali, synthetic };
// cache_aware (trainio): seeded, then each rank's order prefers what its node's cache tier holds.
enum class Shuffle { off, seed, random, cache_aware };
enum class ReadType { on_demand, memory };
enum class Compression { none, gzip, lzf, bz2, zip, xz, zstd };
enum class StorageType { local_fs, parallel_fs, s3 };
// Several S3 endpoints: each rank uses endpoint rank % N (the MLCommons DLIO fork's way), or
// each client sends its requests round robin over all of them.
enum class EndpointSpread { rank, request };
enum class FileAccess { multi, shared, collective, mpio, posix };
enum class CheckpointType { rank_zero, all_ranks };
enum class CheckpointMode { standard, subset };  // DLIO spells `standard` as "default"
enum class ElementType { uint8, int8, uint16, int16, uint32, int32, uint64, int64, float16, float32, float64 };
enum class ModelDataType { int8, uint8, fp16, bf16, fp32, fp64 };
// trainio extensions of the reader section
enum class Access { framework, sample };
enum class ShuffleScope { global, local };
enum class IoEngine { posix, mmap, io_uring };
enum class Evict { none, fadvise, drop_caches };
// How a checkpoint's tensors are laid out in files (checkpoint.file_layout).
enum class CheckpointLayout { torch, per_tensor, per_rank };
// trainio's cache tiers (docs/caching.md)
enum class CacheTier { none, local_ssd, memory };
enum class CachePolicy { lru, fifo, fill_once };  // fill_once is spelled "static"
enum class CacheStaging { on_demand, before_first_epoch };

// Name <-> value tables. Aliases (older DLIO spellings such as "dlio_npz") map to a value but are
// never printed.
template <typename E>
struct EnumName {
  std::string_view name;
  E value;
  bool alias = false;
};

template <typename E>
std::span<const EnumName<E>> enum_names();

template <typename E>
std::string_view to_string(E value) {
  for (const auto& entry : enum_names<E>())
    if (entry.value == value && !entry.alias) return entry.name;
  return "?";
}

template <typename E>
std::optional<E> enum_from_string(std::string_view text, bool* was_alias = nullptr) {
  for (const auto& entry : enum_names<E>()) {
    if (entry.name == text) {
      if (was_alias) *was_alias = entry.alias;
      return entry.value;
    }
  }
  return std::nullopt;
}

// Bytes per element.
std::uint32_t element_size(ElementType t);
std::uint32_t element_size(ModelDataType t);

// File name extension of a format, as DLIO writes it ("npz", "tfrecord", ...).
std::string_view extension(Format f);

}  // namespace trainio::config
