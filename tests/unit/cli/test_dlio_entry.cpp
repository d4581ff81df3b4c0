#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "cli/dlio_entry.hpp"
#include "util/error.hpp"
#include "unit/text.hpp"

using namespace trainio;
using namespace trainio::cli;
using trainio::test::contains;

namespace {

// A file system holding exactly `files`.
auto files_are(std::set<std::string> files) {
  return [files = std::move(files)](const std::string& path) { return files.count(path) > 0; };
}

DlioArgs translate(const std::vector<std::string>& args, std::set<std::string> files = {}) {
  return translate_dlio_args(args, files_are(std::move(files)));
}

std::string usage_failure(const std::vector<std::string>& args) {
  try {
    translate(args);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    return format_error(e);
  }
  FAIL("expected the command line to be rejected");
  return {};
}

}  // namespace

TEST_CASE("the name dlio_benchmark selects DLIO's entry point") {
  CHECK(invoked_as_dlio("dlio_benchmark"));
  CHECK(invoked_as_dlio("/opt/mlps/bin/dlio_benchmark"));
  CHECK(invoked_as_dlio("./dlio_benchmark"));
  CHECK_FALSE(invoked_as_dlio("trainio"));
  CHECK_FALSE(invoked_as_dlio("/usr/bin/trainio"));
  CHECK_FALSE(invoked_as_dlio("/x/dlio_benchmark/trainio"));
  CHECK_FALSE(invoked_as_dlio("dlio_benchmark_old"));
  CHECK_FALSE(invoked_as_dlio(nullptr));
}

TEST_CASE("mlpstorage's training command line becomes a trainio run") {
  // As mlpstorage (v2.0) builds it in benchmarks/dlio.py.
  const DlioArgs a = translate({"workload=unet3d_h100", "++hydra.run.dir=/r/training/unet3d/run/20250101_120000",
                                "++hydra.output_subdir=dlio_config", "++workload.dataset.num_files_train=42",
                                "++workload.dataset.data_folder=/data/unet3d", "--config-dir=/mlps/configs/dlio"},
                               {"/mlps/configs/dlio/workload/unet3d_h100.yaml"});
  CHECK(a.words == std::vector<std::string>{"/mlps/configs/dlio/workload/unet3d_h100.yaml",
                                            "++workload.dataset.num_files_train=42",
                                            "++workload.dataset.data_folder=/data/unet3d"});
  CHECK(a.output == "/r/training/unet3d/run/20250101_120000");
  CHECK(a.hydra_subdir == "dlio_config");
  CHECK(a.notes.empty());
  CHECK_FALSE(a.help);
}

TEST_CASE("a config folder: DIR/workload/NAME.yaml first, then the shipped names") {
  SECTION("separate word") {
    const DlioArgs a = translate({"workload=mine", "--config-dir", "cfg"}, {"cfg/workload/mine.yaml"});
    CHECK(a.words == std::vector<std::string>{"cfg/workload/mine.yaml"});
  }
  SECTION("Hydra's short form -cd, trailing slash") {
    const DlioArgs a = translate({"-cd", "cfg/", "workload=mine"}, {"cfg/workload/mine.yaml"});
    CHECK(a.words == std::vector<std::string>{"cfg/workload/mine.yaml"});
  }
  SECTION("not in the folder: the shipped workload of that name") {
    const DlioArgs a = translate({"workload=unet3d_h100", "--config-dir=cfg"});
    CHECK(a.words == std::vector<std::string>{"workload=unet3d_h100"});
  }
  SECTION("no workload= at all: DLIO's default workload") {
    const DlioArgs a = translate({"++workload.train.epochs=2"});
    CHECK(a.words == std::vector<std::string>{"workload=default", "++workload.train.epochs=2"});
  }
  SECTION("the folder's default.yaml when no workload is named") {
    const DlioArgs a = translate({"--config-dir=cfg"}, {"cfg/workload/default.yaml"});
    CHECK(a.words == std::vector<std::string>{"cfg/workload/default.yaml"});
  }
  SECTION("--config-dir without a folder") {
    CHECK(contains(usage_failure({"workload=x", "--config-dir"}), "--config-dir"));
    CHECK(contains(usage_failure({"workload=x", "--config-dir="}), "--config-dir"));
  }
}

TEST_CASE("Hydra's own settings: run.dir and output_subdir used, the rest noted") {
  const DlioArgs a = translate({"workload=x", "hydra.run.dir=out", "+hydra.output_subdir=null", "++hydra.job.chdir=True",
                                "hydra/job_logging=disabled", "++hydra.verbose=true"});
  CHECK(a.output == "out");
  CHECK(a.hydra_subdir.empty());
  REQUIRE(a.notes.size() == 3);
  CHECK(contains(a.notes[0], "hydra.job.chdir"));
  CHECK(contains(a.notes[1], "hydra/job_logging"));
  CHECK(contains(a.notes[2], "hydra.verbose"));
  CHECK(a.words == std::vector<std::string>{"workload=x"});
}

TEST_CASE("overrides keep their order and spelling, and workload=NAME may come anywhere") {
  const DlioArgs a = translate({"++workload.reader.batch_size=4", "workload.train.epochs=3", "workload=x",
                                "~workload.dataset.format", "+workload.train.seed=9"});
  CHECK(a.words == std::vector<std::string>{"workload=x", "++workload.reader.batch_size=4", "workload.train.epochs=3",
                                            "~workload.dataset.format", "+workload.train.seed=9"});
}

TEST_CASE("what DLIO's entry point would not take, or trainio does not do of Hydra, is a usage error") {
  CHECK(contains(usage_failure({"workload=a", "workload=b"}), "two workloads"));
  CHECK(contains(usage_failure({"workload="}), "workload="));
  CHECK(contains(usage_failure({"--multirun", "workload=a"}), "--multirun"));
  CHECK(contains(usage_failure({"-m", "workload=a"}), "-m"));
  CHECK(contains(usage_failure({"--cfg", "job"}), "--cfg"));
  CHECK(contains(usage_failure({"run", "workload=a"}), "'run'"));
  CHECK(contains(usage_failure({"hydra.run.dir"}), "hydra.run.dir"));
  // Hydra's files stay in the results folder.
  CHECK(contains(usage_failure({"++hydra.output_subdir=/etc"}), "outside the results folder"));
  CHECK(contains(usage_failure({"++hydra.output_subdir=a/../../x"}), "outside the results folder"));
  CHECK(contains(usage_failure({"++hydra.output_subdir="}), "outside the results folder"));
  CHECK(translate({"++hydra.output_subdir=cfg/hydra"}).hydra_subdir == "cfg/hydra");
  // Keys outside workload: and hydra: do not exist in DLIO's config.
  CHECK(contains(usage_failure({"dataset.num_files_train=4"}), "++workload.dataset.num_files_train=4"));
}

TEST_CASE("a request for help is answered, not run") {
  CHECK(translate({"--help"}).help);
  CHECK(translate({"workload=x", "-h"}).help);
}
