#include <catch2/catch.hpp>

#include <filesystem>
#include <vector>

#include "engine/step_spill.hpp"
#include "unit/temp_dir.hpp"

using namespace trainio;

TEST_CASE("the step spill leaves no file however the rank ends, and reads back what it holds") {
  test::TempDir dir("step-spill");
  const auto entries = [&] {
    return std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator());
  };
  engine::StepSpill spill(dir.path(), 3);
  // Unlinked once open: a launcher's SIGKILL cannot leave it behind (e2e test_stop.py).
  CHECK(entries() == 0);
  for (int i = 0; i < 5000; ++i) spill.append({static_cast<float>(i), 1.0f, 2.0f, 3.0f});  // past one buffer
  REQUIRE(spill.size() == 5000);
  std::vector<metrics::StepTimes> out(3);
  spill.read(4095, out);
  CHECK(out[0].load == 4095.0f);
  CHECK(out[2].load == 4097.0f);
  CHECK(entries() == 0);
}
