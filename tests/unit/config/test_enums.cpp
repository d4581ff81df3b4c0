// The closed sets of values a workload key may take (config/enums.hpp): DLIO's spellings both
// ways, aliases that read but never print, element sizes and file extensions.
#include <catch2/catch.hpp>

#include <string>

#include "config/enums.hpp"

using namespace trainio::config;

namespace {
// Every printed name reads back as its value, and names are unique within their table.
template <typename E>
void check_round_trip() {
  int names = 0;
  for (const auto& entry : enum_names<E>()) {
    bool alias = true;
    const auto back = enum_from_string<E>(entry.name, &alias);
    REQUIRE(back);
    CHECK(*back == entry.value);
    CHECK(alias == entry.alias);  // the first entry of a name decides
    if (!entry.alias) {
      CHECK(to_string(entry.value) == entry.name);
      ++names;
    }
  }
  CHECK(names > 0);
}
}  // namespace

TEST_CASE("every enumeration's names read back as their values") {
  check_round_trip<Framework>();
  check_round_trip<Format>();
  check_round_trip<DataLoader>();
  check_round_trip<Shuffle>();
  check_round_trip<ReadType>();
  check_round_trip<Compression>();
  check_round_trip<StorageType>();
  check_round_trip<EndpointSpread>();
  check_round_trip<FileAccess>();
  check_round_trip<CheckpointType>();
  check_round_trip<CheckpointMode>();
  check_round_trip<ElementType>();
  check_round_trip<ModelDataType>();
  check_round_trip<Access>();
  check_round_trip<ShuffleScope>();
  check_round_trip<IoEngine>();
  check_round_trip<Evict>();
  check_round_trip<CacheTier>();
  check_round_trip<CachePolicy>();
  check_round_trip<CacheStaging>();
}

TEST_CASE("DLIO's older and YAML's spellings read as aliases and print as the name") {
  bool alias = false;
  CHECK(enum_from_string<Format>("dlio_hdf5", &alias) == Format::hdf5);
  CHECK(alias);
  CHECK(enum_from_string<DataLoader>("dlio_pytorch") == DataLoader::pytorch);
  CHECK(enum_from_string<Shuffle>("false") == Shuffle::off);  // YAML 1.1's reading of `off`
  CHECK(to_string(Shuffle::off) == "off");
  CHECK(enum_from_string<CheckpointMode>("default") == CheckpointMode::standard);
  CHECK(to_string(CheckpointMode::standard) == "default");
  CHECK(enum_from_string<CachePolicy>("static") == CachePolicy::fill_once);
  CHECK(enum_from_string<ElementType>("float") == ElementType::float64);  // numpy's float is 64-bit
  CHECK(enum_from_string<ElementType>("int") == ElementType::int64);
  CHECK(to_string(ElementType::float64) == "float64");
  CHECK_FALSE(enum_from_string<Format>("NPZ"));
  CHECK_FALSE(enum_from_string<Format>(""));
  CHECK_FALSE(enum_from_string<Format>("npz "));
}

TEST_CASE("element sizes in bytes") {
  CHECK(element_size(ElementType::uint8) == 1);
  CHECK(element_size(ElementType::int8) == 1);
  CHECK(element_size(ElementType::uint16) == 2);
  CHECK(element_size(ElementType::int16) == 2);
  CHECK(element_size(ElementType::float16) == 2);
  CHECK(element_size(ElementType::uint32) == 4);
  CHECK(element_size(ElementType::int32) == 4);
  CHECK(element_size(ElementType::float32) == 4);
  CHECK(element_size(ElementType::uint64) == 8);
  CHECK(element_size(ElementType::int64) == 8);
  CHECK(element_size(ElementType::float64) == 8);
  CHECK(element_size(ModelDataType::int8) == 1);
  CHECK(element_size(ModelDataType::uint8) == 1);
  CHECK(element_size(ModelDataType::fp16) == 2);
  CHECK(element_size(ModelDataType::bf16) == 2);
  CHECK(element_size(ModelDataType::fp32) == 4);
  CHECK(element_size(ModelDataType::fp64) == 8);
}

TEST_CASE("a format's file extension is DLIO's format name") {
  CHECK(extension(Format::npz) == "npz");
  CHECK(extension(Format::tfrecord) == "tfrecord");
  CHECK(extension(Format::hdf5) == "hdf5");
  CHECK(extension(Format::indexed_binary) == "indexed_binary");
  CHECK(extension(Format::parquet) == "parquet");
}
