// The three files Hydra writes for a DLIO run (report/hydra_files.hpp), as mlpstorage and DLIO's
// post-processor read them: the resolved workload, the overrides in Hydra's spelling, and the
// run's Hydra settings.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "config/load.hpp"
#include "report/hydra_files.hpp"

using namespace trainio;

namespace {
config::Workload pytorch_npz(const std::vector<std::string>& overrides) {
  return config::load_text("framework: pytorch\nreader:\n  data_loader: pytorch\ndataset:\n  format: npz\n"
                           "  record_length_bytes: 4096\n",
                           "t.yaml", "mine", overrides);
}
}  // namespace

TEST_CASE("overrides in Hydra's spelling: under workload., with their sigils") {
  CHECK(report::hydra_override("reader.batch_size=8") == "++workload.reader.batch_size=8");
  CHECK(report::hydra_override("+reader.batch_size=8") == "+workload.reader.batch_size=8");
  CHECK(report::hydra_override("~dataset.record_dims") == "~workload.dataset.record_dims");
  CHECK(report::hydra_override("++workload.train.epochs=2") == "++workload.train.epochs=2");
  CHECK(report::hydra_override("workload.train.epochs=2") == "workload.train.epochs=2");
}

TEST_CASE("config.yaml: the resolved workload under `workload:`, with DLIO 1.0's record_length") {
  const auto w = pytorch_npz({"train.epochs=3"});
  const std::string text = report::hydra_config_yaml(w);
  CHECK(text.rfind("# written by trainio ", 0) == 0);
  const YAML::Node doc = YAML::Load(text);
  CHECK(doc["workload"]["train"]["epochs"].as<int>() == 3);
  CHECK(doc["workload"]["dataset"]["format"].as<std::string>() == "npz");
  CHECK(doc["workload"]["dataset"]["record_length"].as<std::uint64_t>() == 4096u);
  CHECK(doc["workload"]["dataset"]["record_length_bytes"].as<std::uint64_t>() == 4096u);
}

TEST_CASE("overrides.yaml: workload=NAME, then each override as Hydra spells it") {
  const auto w = pytorch_npz({"train.epochs=3", "reader.batch_size=2"});
  const YAML::Node doc = YAML::Load(report::hydra_overrides_yaml(w));
  REQUIRE(doc.IsSequence());
  REQUIRE(doc.size() == 3);
  CHECK(doc[0].as<std::string>() == "workload=mine");
  CHECK(doc[1].as<std::string>() == "++workload.train.epochs=3");
  CHECK(doc[2].as<std::string>() == "++workload.reader.batch_size=2");
  CHECK(YAML::Load(report::hydra_overrides_yaml(pytorch_npz({}))).size() == 1);
}

TEST_CASE("hydra.yaml: the run's folder, its overrides sorted into the dirname, and the job") {
  const auto w = pytorch_npz({"train.epochs=3", "reader.batch_size=2"});
  report::HydraRun run{"results/run1", "/abs/results/run1", "/abs", ".hydra", "dlio_benchmark"};
  const YAML::Node h = YAML::Load(report::hydra_yaml(w, run))["hydra"];
  CHECK(h["run"]["dir"].as<std::string>() == "results/run1");
  CHECK(h["output_subdir"].as<std::string>() == ".hydra");
  CHECK(h["mode"].as<std::string>() == "RUN");
  REQUIRE(h["overrides"]["hydra"].size() == 3);
  CHECK(h["overrides"]["hydra"][0].as<std::string>() == "hydra.run.dir=results/run1");
  REQUIRE(h["overrides"]["task"].size() == 3);
  CHECK(h["overrides"]["task"][0].as<std::string>() == "workload=mine");
  CHECK(h["job"]["name"].as<std::string>() == "dlio_benchmark");
  CHECK(h["job"]["override_dirname"].as<std::string>() ==
        "++workload.reader.batch_size=2,++workload.train.epochs=3,workload=mine");
  CHECK(h["runtime"]["cwd"].as<std::string>() == "/abs");
  CHECK(h["runtime"]["output_dir"].as<std::string>() == "/abs/results/run1");
  CHECK(h["runtime"]["choices"]["workload"].as<std::string>() == "mine");
}
