// What a checkpoint file holds (plan/state_dict.hpp): tensors' sizes, nested dicts, and a dict
// shared by several keys counted once, as torch.save stores it once.
#include <catch2/catch.hpp>

#include <memory>

#include "plan/state_dict.hpp"

using namespace trainio;
using namespace trainio::plan;
using config::ModelDataType;

TEST_CASE("a tensor's bytes are its elements times its element size") {
  CHECK(TensorSpec{10, ModelDataType::int8}.bytes() == 10u);
  CHECK(TensorSpec{10, ModelDataType::bf16}.bytes() == 20u);
  CHECK(TensorSpec{10, ModelDataType::fp32}.bytes() == 40u);
  CHECK(TensorSpec{10, ModelDataType::fp64}.bytes() == 80u);
  CHECK(TensorSpec{0, ModelDataType::fp64}.bytes() == 0u);
  // 405B parameters in fp32: past 32 bits, no overflow.
  CHECK(TensorSpec{405'000'000'000ULL, ModelDataType::fp32}.bytes() == 1'620'000'000'000ULL);
}

TEST_CASE("a dict's bytes add its tensors and its nested dicts'") {
  StateDict empty;
  CHECK(empty.tensor_bytes() == 0u);

  auto inner = std::make_shared<StateDict>();
  inner->add("weight", TensorSpec{100, ModelDataType::fp16});
  inner->add("bias", TensorSpec{10, ModelDataType::fp16});
  StateDict d;
  d.add("step", TensorSpec{1, ModelDataType::fp64});
  d.add("layer", inner);
  CHECK(d.tensor_bytes() == 8u + 200u + 20u);
  REQUIRE(d.items.size() == 2);
  CHECK(d.items[0].key == "step");
  CHECK(d.items[0].key_kind == StateDict::Key::computed);
  CHECK(d.items[1].dict == inner);
}

TEST_CASE("a dict reached by several keys counts once") {
  auto shared = std::make_shared<StateDict>();
  shared->add("w", TensorSpec{1000, ModelDataType::fp32});
  StateDict d;
  for (int layer = 0; layer < 5; ++layer) d.add(std::to_string(layer), shared);
  d.add("combined", TensorSpec{3, ModelDataType::int8}, StateDict::Key::literal);
  CHECK(d.tensor_bytes() == 4000u + 3u);
  CHECK(d.items.back().key_kind == StateDict::Key::literal);

  // Two distinct dicts of the same content count twice.
  auto other = std::make_shared<StateDict>(*shared);
  d.add("5", other);
  CHECK(d.tensor_bytes() == 8000u + 3u);
}
