#include "config/enums.hpp"

namespace trainio::config {

#define TRAINIO_ENUM_TABLE(Type, ...)                          \
  template <>                                                  \
  std::span<const EnumName<Type>> enum_names<Type>() {         \
    static constexpr EnumName<Type> kTable[] = {__VA_ARGS__};  \
    return kTable;                                             \
  }

TRAINIO_ENUM_TABLE(Framework, {"tensorflow", Framework::tensorflow}, {"pytorch", Framework::pytorch})

TRAINIO_ENUM_TABLE(Format, {"tfrecord", Format::tfrecord}, {"hdf5", Format::hdf5},
                   {"csv", Format::csv}, {"npz", Format::npz}, {"npy", Format::npy},
                   {"jpeg", Format::jpeg}, {"png", Format::png},
                   {"indexed_binary", Format::indexed_binary},
                   {"mmap_indexed_binary", Format::mmap_indexed_binary},
                   {"synthetic", Format::synthetic}, {"tar", Format::tar}, {"parquet", Format::parquet},
                   // The short-lived 2023 DLIO spellings still found in its older workload files.
                   {"dlio_npz", Format::npz, true}, {"dlio_tfrecord", Format::tfrecord, true},
                   {"dlio_hdf5", Format::hdf5, true}, {"dlio_csv", Format::csv, true},
                   {"dlio_jpeg", Format::jpeg, true}, {"dlio_png", Format::png, true})

TRAINIO_ENUM_TABLE(DataLoader, {"tensorflow", DataLoader::tensorflow},
                   {"pytorch", DataLoader::pytorch}, {"dali", DataLoader::dali},
                   {"native_dali", DataLoader::native_dali}, {"synthetic", DataLoader::synthetic},
                   {"dlio_pytorch", DataLoader::pytorch, true},
                   {"dlio_tensorflow", DataLoader::tensorflow, true})

TRAINIO_ENUM_TABLE(Shuffle, {"off", Shuffle::off}, {"seed", Shuffle::seed},
                   {"random", Shuffle::random}, {"cache_aware", Shuffle::cache_aware},
                   // YAML 1.1 reads an unquoted `off` as the boolean false.
                   {"false", Shuffle::off, true}, {"False", Shuffle::off, true})

TRAINIO_ENUM_TABLE(ReadType, {"on_demand", ReadType::on_demand}, {"memory", ReadType::memory})

TRAINIO_ENUM_TABLE(Compression, {"none", Compression::none}, {"gzip", Compression::gzip},
                   {"lzf", Compression::lzf}, {"bz2", Compression::bz2}, {"zip", Compression::zip},
                   {"xz", Compression::xz}, {"zstd", Compression::zstd})

TRAINIO_ENUM_TABLE(StorageType, {"local_fs", StorageType::local_fs},
                   {"parallel_fs", StorageType::parallel_fs}, {"s3", StorageType::s3})

TRAINIO_ENUM_TABLE(EndpointSpread, {"rank", EndpointSpread::rank}, {"request", EndpointSpread::request})

TRAINIO_ENUM_TABLE(FileAccess, {"multi", FileAccess::multi}, {"shared", FileAccess::shared},
                   {"collective", FileAccess::collective}, {"mpio", FileAccess::mpio},
                   {"posix", FileAccess::posix})

TRAINIO_ENUM_TABLE(CheckpointType, {"rank_zero", CheckpointType::rank_zero},
                   {"all_ranks", CheckpointType::all_ranks})

TRAINIO_ENUM_TABLE(CheckpointMode, {"default", CheckpointMode::standard},
                   {"subset", CheckpointMode::subset})

TRAINIO_ENUM_TABLE(ElementType, {"uint8", ElementType::uint8}, {"int8", ElementType::int8},
                   {"uint16", ElementType::uint16}, {"int16", ElementType::int16},
                   {"uint32", ElementType::uint32}, {"int32", ElementType::int32},
                   {"uint64", ElementType::uint64}, {"int64", ElementType::int64},
                   {"float16", ElementType::float16}, {"float32", ElementType::float32},
                   {"float64", ElementType::float64},
                   // numpy spellings
                   {"u1", ElementType::uint8, true}, {"i1", ElementType::int8, true},
                   {"float", ElementType::float64, true}, {"int", ElementType::int64, true},
                   {"half", ElementType::float16, true}, {"double", ElementType::float64, true})

TRAINIO_ENUM_TABLE(ModelDataType, {"int8", ModelDataType::int8}, {"uint8", ModelDataType::uint8},
                   {"fp16", ModelDataType::fp16}, {"bf16", ModelDataType::bf16},
                   {"fp32", ModelDataType::fp32}, {"fp64", ModelDataType::fp64})

TRAINIO_ENUM_TABLE(Access, {"framework", Access::framework}, {"sample", Access::sample})
TRAINIO_ENUM_TABLE(ShuffleScope, {"global", ShuffleScope::global}, {"local", ShuffleScope::local})
TRAINIO_ENUM_TABLE(IoEngine, {"posix", IoEngine::posix}, {"mmap", IoEngine::mmap}, {"io_uring", IoEngine::io_uring})
TRAINIO_ENUM_TABLE(Evict, {"none", Evict::none}, {"fadvise", Evict::fadvise}, {"drop_caches", Evict::drop_caches})
TRAINIO_ENUM_TABLE(CheckpointLayout, {"torch", CheckpointLayout::torch}, {"per_tensor", CheckpointLayout::per_tensor},
                   {"per_rank", CheckpointLayout::per_rank})

TRAINIO_ENUM_TABLE(CacheTier, {"none", CacheTier::none}, {"local_ssd", CacheTier::local_ssd},
                   {"memory", CacheTier::memory})

TRAINIO_ENUM_TABLE(CachePolicy, {"lru", CachePolicy::lru}, {"fifo", CachePolicy::fifo},
                   {"static", CachePolicy::fill_once})

TRAINIO_ENUM_TABLE(CacheStaging, {"on_demand", CacheStaging::on_demand},
                   {"before_first_epoch", CacheStaging::before_first_epoch})

#undef TRAINIO_ENUM_TABLE

std::uint32_t element_size(ElementType t) {
  switch (t) {
    case ElementType::uint8:
    case ElementType::int8: return 1;
    case ElementType::uint16:
    case ElementType::int16:
    case ElementType::float16: return 2;
    case ElementType::uint32:
    case ElementType::int32:
    case ElementType::float32: return 4;
    case ElementType::uint64:
    case ElementType::int64:
    case ElementType::float64: return 8;
  }
  return 1;
}

std::uint32_t element_size(ModelDataType t) {
  switch (t) {
    case ModelDataType::int8:
    case ModelDataType::uint8: return 1;
    case ModelDataType::fp16:
    case ModelDataType::bf16: return 2;
    case ModelDataType::fp32: return 4;
    case ModelDataType::fp64: return 8;
  }
  return 2;
}

std::string_view extension(Format f) { return to_string(f); }

}  // namespace trainio::config
