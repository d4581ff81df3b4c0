#include <catch2/catch.hpp>

#include <string>

#include "config/dump.hpp"
#include "config/load.hpp"
#include "config/shipped_workloads.hpp"
#include "util/error.hpp"
#include "unit/text.hpp"

using namespace trainio;
using namespace trainio::config;
using trainio::test::contains;

namespace {

Workload from(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return load_text(yaml, "test.yaml", "test", overrides);
}

// The error a load raises, for checking kind and text.
Error failure(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    from(yaml, overrides);
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected the workload to be rejected");
  return internal_error("unreachable");
}

}  // namespace

TEST_CASE("an empty workload has DLIO's defaults") {
  const Workload w = from("");
  CHECK(w.framework == Framework::tensorflow);
  CHECK(w.workflow.train);
  CHECK_FALSE(w.workflow.generate_data);
  CHECK(w.dataset.format == Format::tfrecord);
  CHECK(w.dataset.num_files_train == 8);
  CHECK(w.dataset.num_samples_per_file == 1);
  CHECK(w.dataset.record_length_bytes == 65536);
  CHECK(w.dataset.data_folder == "./data/");
  CHECK(w.dataset.file_prefix == "img");
  CHECK(w.reader.data_loader == DataLoader::tensorflow);
  CHECK(w.reader.batch_size == 1);
  CHECK(w.reader.read_threads == 1);
  CHECK(w.reader.prefetch_size == 2);
  CHECK(w.reader.shuffle_size == 1024);
  CHECK(w.train.epochs == 1);
  CHECK(w.train.seed == 123);
  CHECK(w.train.seed_change_epoch);
  CHECK(w.train.total_training_steps == -1);
  CHECK(w.checkpoint.checkpoint_folder == "./checkpoints/");
  CHECK(w.checkpoint.steps_between_checkpoints == -1);
  CHECK(w.model.model_size_bytes == 10240);
  CHECK(w.model.transformer.vocab_size == 32000);
  CHECK(w.output.exclude_start_steps == 1);
  CHECK(w.output.log_file == "dlio.log");
  CHECK(w.metric.au == Approx(0.90));
}

TEST_CASE("every shipped workload loads") {
  for (const auto& shipped : shipped_workloads()) {
    INFO(shipped.name);
    CHECK_NOTHROW(load(shipped.name));
    CHECK_FALSE(description_of(shipped).empty());
  }
}

TEST_CASE("unet3d_h100 carries MLPerf's values") {
  const Workload w = load("unet3d_h100");
  CHECK(w.framework == Framework::pytorch);
  CHECK(w.dataset.format == Format::npz);
  CHECK(w.dataset.num_files_train == 168);
  CHECK(w.dataset.record_length_bytes == 146600628);
  CHECK(w.dataset.record_length_bytes_stdev == 68341808);
  CHECK(w.reader.batch_size == 7);
  CHECK(w.reader.read_threads == 4);
  CHECK(w.reader.file_shuffle == Shuffle::seed);
  CHECK(w.reader.sample_shuffle == Shuffle::seed);
  CHECK(w.train.epochs == 5);
  CHECK(w.train.computation_time.mean == Approx(0.323));
  CHECK(load("unet3d_a100").train.computation_time.mean == Approx(0.636));
  CHECK(load("workload=unet3d_h100").name == "unet3d_h100");
}

TEST_CASE("DLIO-style workload files load unchanged, with notes for keys DLIO ignores") {
  const std::string dir = std::string(TRAINIO_SOURCE_DIR) + "/tests/fixtures/dlio/";
  SECTION("unet3d with checkpoint.model_size") {
    const Workload w = load(dir + "unet3d_h100_dlio_style.yaml");
    CHECK(w.dataset.num_files_train == 168);
    CHECK(w.name == "unet3d_h100_dlio_style");
    bool noted = false;
    for (const auto& n : w.notes) noted = noted || (n.key == "checkpoint.model_size" && contains(n.message, "model.model_size_bytes"));
    CHECK(noted);
    CHECK(w.model.model_size_bytes == 499153191);  // DLIO 1.0's checkpoint.model_size
  }
  SECTION("old default: scalar model, dlio_npz, dlio_pytorch, record_length, profiling") {
    const Workload w = load(dir + "default_old_style.yaml");
    CHECK(w.model.name == "default");
    CHECK(w.dataset.format == Format::npz);
    CHECK(w.reader.data_loader == DataLoader::pytorch);
    CHECK(w.dataset.record_length_bytes == 4096);  // DLIO 1.0's record_length
    CHECK(w.evaluation.eval_time.mean == Approx(0.5));
  }
  SECTION("bert with workflow.debug") { CHECK(load(dir + "bert_dlio_style.yaml").reader.transfer_size == 262144); }
  SECTION("llama with checkpoint.model_datatype") {
    const Workload w = load(dir + "llama_8b_zero3_dlio_style.yaml");
    CHECK(w.model.parallelism.zero_stage == 3);
    CHECK(w.model.transformer.hidden_size == 4096);
    CHECK(w.train.computation_time.mean == 5);
  }
  SECTION("dlrm with one-space indentation") {
    const Workload w = load(dir + "dlrm_dlio_style.yaml");
    CHECK(w.dataset.num_samples_per_file == 4195198976LL);
    CHECK(w.reader.sample_shuffle == Shuffle::random);
    CHECK(w.model.name == "dlrm");
  }
}

TEST_CASE("an unknown key is an error with its position and a suggestion") {
  SECTION("misspelled within its section") {
    const Error e = failure("reader:\n  batchsize: 4\n");
    CHECK(e.kind() == ErrorKind::config);
    CHECK(contains(e.what(), "test.yaml:2:3"));
    CHECK(contains(e.what(), "reader.batchsize"));
    CHECK(contains(e.hint(), "reader.batch_size"));
  }
  SECTION("right name, wrong section") {
    const Error e = failure("train:\n  batch_size: 4\n");
    CHECK(contains(e.hint(), "reader.batch_size"));
  }
  SECTION("an unknown section") {
    const Error e = failure("datset:\n  format: npz\n");
    CHECK(contains(e.what(), "test.yaml:1:1"));
    CHECK(contains(e.hint(), "dataset"));
  }
  SECTION("nothing close") {
    const Error e = failure("reader:\n  zzzzzzzzzzzz: 1\n");
    CHECK(contains(e.hint(), "trainio config --keys"));
  }
}

TEST_CASE("a wrong type or range names the key and what it expects") {
  const Error e = failure("reader:\n  batch_size: abc\n");
  CHECK(e.kind() == ErrorKind::config);
  CHECK(contains(e.what(), "test.yaml:2:15"));
  CHECK(contains(e.what(), "reader.batch_size: expected an integer >= 1, got 'abc'"));
  CHECK(contains(failure("reader:\n  batch_size: -3\n").what(), "expected an integer >= 1, got '-3'"));
  CHECK(contains(failure("reader:\n  batch_size: 2.5\n").what(), "expected an integer >= 1"));
  CHECK(contains(failure("dataset:\n  format: parquetx\n").what(), "one of tfrecord, hdf5"));
  CHECK(contains(failure("workflow:\n  train: maybe\n").what(), "true or false"));
  CHECK(contains(failure("reader:\n  batch_size: [1, 2]\n").what(), "expected an integer >= 1, got '[1, 2]'"));
  CHECK(contains(failure("metric:\n  au: 90\n").what(), "a number from 0 to 1"));
  CHECK(contains(failure("dataset:\n  hdf5: 3\n").what(), "is a section"));
  CHECK(contains(failure("reader:\n  batch_size:\n    a: 1\n").what(), "got a mapping"));
}

TEST_CASE("impossible combinations are refused") {
  const auto combo = [](const std::string& yaml) { return failure(yaml); };
  CHECK(contains(combo("framework: tensorflow\nreader:\n  data_loader: pytorch\ndataset:\n  format: npz\n").what(),
                 "do not go together"));
  CHECK(contains(combo("dataset:\n  record_dims: [4, 4]\n  record_length_bytes_stdev: 10\n").what(), "both set"));
  CHECK(contains(combo("dataset:\n  format: jpeg\n  record_element_type: float32\nreader:\n  data_loader: dali\n").what(),
                 "uint8"));
  CHECK(contains(combo("workflow:\n  train: false\n").what(), "nothing to do"));
  CHECK(contains(combo("workflow:\n  evaluation: true\nreader:\n  data_loader: tensorflow\n").what(), "num_files_eval"));
  CHECK(contains(combo("checkpoint:\n  num_checkpoints_write: 2\n  num_checkpoints_read: 3\n").what(), "num_checkpoints_read"));
  CHECK(contains(combo("model:\n  parallelism:\n    pipeline: 2\n    zero_stage: 3\n").what(), "ZeRO stage 3"));
}

TEST_CASE("YAML syntax errors and duplicate keys point at the line") {
  const Error e = failure("reader:\n  batch_size: 4\n   read_threads: [1\n");
  CHECK(e.kind() == ErrorKind::config);
  CHECK(contains(e.what(), "not valid YAML"));
  const Error d = failure("reader:\n  batch_size: 4\n  batch_size: 8\n");
  CHECK(contains(d.what(), "appears twice"));
  CHECK(contains(d.what(), "test.yaml:3:3"));
}

TEST_CASE("overrides set, add and remove keys, in trainio's and DLIO's forms") {
  const Workload w = from("reader:\n  batch_size: 4\n",
                          {"reader.batch_size=8", "++workload.dataset.num_files_train=16", "+workload.train.epochs=3",
                           "dataset.record_dims=[4,8]", "train.computation_time={mean: 0.1, stdev: 0.01}",
                           "++workload.workflow.generate_data=True"});
  CHECK(w.reader.batch_size == 8);
  CHECK(w.dataset.num_files_train == 16);
  CHECK(w.train.epochs == 3);
  CHECK(w.dataset.record_dims == std::vector<std::uint64_t>{4, 8});
  CHECK(w.train.computation_time.kind == TimeSpec::Kind::normal);
  CHECK(w.train.computation_time.stdev == Approx(0.01));
  CHECK(w.workflow.generate_data);
  CHECK(w.overrides.size() == 6);
  CHECK(from("reader:\n  batch_size: 4\n", {"~reader.batch_size"}).reader.batch_size == 1);
  // The scalar model form is expanded when an override goes below it.
  CHECK(from("model: resnet\n", {"model.model_size_bytes=5"}).model.name == "resnet");
}

TEST_CASE("a bad override is named in the error") {
  const Error typo = failure("", {"reader.bach_size=8"});
  CHECK(contains(typo.what(), "override 'reader.bach_size=...'"));  // an unknown key's value is not echoed
  CHECK(contains(typo.hint(), "reader.batch_size"));
  const Error value = failure("", {"reader.batch_size=abc"});
  CHECK(contains(value.what(), "override 'reader.batch_size=abc'"));
  CHECK(failure("", {"reader.batch_size"}).kind() == ErrorKind::usage);
  CHECK(failure("", {"=3"}).kind() == ErrorKind::usage);
  CHECK(failure("", {"reader.batch_size=[1"}).kind() == ErrorKind::usage);
}

TEST_CASE("a secret is not echoed by an error about its override, even misspelled") {
  const Error typo = failure("", {"storage.storage_options.scret_access_key=s3cr3t"});
  CHECK(contains(typo.what(), "override 'storage.storage_options.scret_access_key=...'"));
  CHECK_FALSE(contains(failure("", {"storage.storage_options.pasword=s3cr3t"}).what(), "s3cr3t"));
  CHECK(contains(typo.hint(), "storage.storage_options.secret_access_key"));
  const Error value = failure("", {"storage.storage_options.secret_access_key=[s3cr3t]"});
  CHECK_FALSE(contains(value.what(), "s3cr3t"));
  CHECK(contains(value.what(), "got '***'"));
  const Error url = failure("", {"storage.storage_options.endpoint_url=http://AK:s3cr3t@10.0.0.1:9000"});
  CHECK(url.kind() == ErrorKind::config);
  CHECK_FALSE(contains(url.what(), "s3cr3t"));
  CHECK(contains(url.what(), "http://***@10.0.0.1:9000"));
  const Workload w = from("", {"storage.storage_options.secret_access_key=s3cr3t"});
  CHECK(w.storage.storage_options.secret_access_key == "s3cr3t");  // used as given
  CHECK(w.overrides.front() == "storage.storage_options.secret_access_key=***");  // shown as ***
}

TEST_CASE("words split into a workload and overrides") {
  const auto s = split_args({"workload=unet3d_h100", "++workload.reader.batch_size=2", "x.y=1"});
  CHECK(s.workload == "workload=unet3d_h100");
  CHECK(s.overrides.size() == 2);
  CHECK_THROWS_AS(split_args({"a", "b"}), Error);
}

TEST_CASE("an unknown workload name suggests the nearest one") {
  try {
    load("unet3d_h10");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(contains(e.hint(), "unet3d_h100"));
  }
}

TEST_CASE("computation_time takes a number, mean/stdev, or a named distribution") {
  CHECK(from("train:\n  computation_time: 0.5\n").train.computation_time.kind == TimeSpec::Kind::constant);
  const auto stdev = from("train:\n  computation_time_stdev: 0.1\n  computation_time: 0.5\n").train.computation_time;
  CHECK(stdev.kind == TimeSpec::Kind::normal);  // the _stdev key refines whatever order it comes in
  CHECK(stdev.mean == Approx(0.5));
  CHECK(stdev.stdev == Approx(0.1));
  const auto gamma = from("train:\n  computation_time:\n    type: gamma\n    shape: 2\n    scale: 0.1\n").train.computation_time;
  CHECK(gamma.kind == TimeSpec::Kind::gamma);
  CHECK(gamma.expected() == Approx(0.2));
  CHECK(contains(failure("train:\n  computation_time:\n    type: weibull\n").what(), "computation_time"));
  CHECK(contains(failure("train:\n  computation_time:\n    mu: 1\n").what(), "'mu'"));
  CHECK(contains(failure("train:\n  computation_time: -1\n").what(), "computation_time"));
}

TEST_CASE("the resolved config reads back as the same workload") {
  for (const std::string name : {"default", "unet3d_h100"}) {
    const Workload w = load(name, {"reader.batch_size=3", "train.computation_time={type: uniform, min: 0.1, max: 0.2}"});
    const std::string yaml = to_yaml(w, true);
    const Workload again = load_text(yaml, "dump.yaml", name);
    CHECK(to_yaml(again, true) == yaml);
    CHECK(again.reader.batch_size == 3);
  }
}

TEST_CASE("keys DLIO only uses in Python are accepted with a note") {
  const Workload w = from("reader:\n  pin_memory: true\n  multiprocessing_context: spawn\n");
  CHECK(w.notes.size() == 2);
  CHECK(w.is_set("reader.pin_memory"));
}

TEST_CASE("DLIO 1.0's key names are read where the 2.0 name is absent, with a note") {
  const auto noted = [](const Workload& w, const std::string& key, const std::string& part) {
    for (const auto& n : w.notes)
      if (n.key == key && contains(n.message, part)) return true;
    return false;
  };
  SECTION("MLPerf Storage v1.0's unet3d: every old name, scalar model") {
    const Workload w = from(
        "model: unet3d\n"
        "dataset:\n  record_length: 146600628\n  record_length_stdev: 68341808\n  record_length_resize: 2097152\n"
        "checkpoint:\n  model_size: 499153191\n");
    CHECK(w.model.name == "unet3d");
    CHECK(w.dataset.record_length_bytes == 146600628);
    CHECK(w.dataset.record_length_bytes_stdev == 68341808);
    CHECK(w.dataset.record_length_bytes_resize == 2097152);
    CHECK(w.model.model_size_bytes == 499153191);
    CHECK(noted(w, "dataset.record_length", "dataset.record_length_bytes"));
    CHECK(noted(w, "dataset.record_length", "test.yaml:3:3"));
    CHECK(noted(w, "checkpoint.model_size", "model.model_size_bytes"));
  }
  SECTION("an override of the old name") {
    const Workload w = from("", {"++workload.dataset.record_length=1000"});
    CHECK(w.dataset.record_length_bytes == 1000);
    CHECK(noted(w, "dataset.record_length", "override '++workload.dataset.record_length=1000'"));
  }
  SECTION("model as a mapping keeps its other keys") {
    const Workload w = from("model:\n  name: m\n  type: cnn\ncheckpoint:\n  model_size: 77\n");
    CHECK(w.model.name == "m");
    CHECK(w.model.model_size_bytes == 77);
  }
  SECTION("both names with the same value: the 2.0 one, noted") {
    const Workload w = from("dataset:\n  record_length_bytes: 4096\n  record_length: 4096\n");
    CHECK(w.dataset.record_length_bytes == 4096);
    CHECK(noted(w, "dataset.record_length", "same value"));
  }
  SECTION("both names with different values: an error naming both") {
    const Error e = failure("dataset:\n  record_length_bytes: 4096\n  record_length: 8192\n");
    CHECK(e.kind() == ErrorKind::config);
    CHECK(contains(e.what(), "dataset.record_length"));
    CHECK(contains(e.what(), "dataset.record_length_bytes"));
    CHECK(contains(e.what(), "8192"));
    CHECK(contains(e.what(), "4096"));
    const Error m = failure("model:\n  model_size_bytes: 1\ncheckpoint:\n  model_size: 2\n");
    CHECK(contains(m.what(), "checkpoint.model_size"));
  }
}

TEST_CASE("asynchronous checkpoints load with their defaults and refuse settings that cannot work") {
  const std::string yaml = "workflow:\n  checkpoint: true\ncheckpoint:\n  async: true\n";
  const Workload w = from(yaml);
  CHECK(w.checkpoint.async);
  CHECK(w.checkpoint.snapshot_bandwidth == 25'000'000'000ull);
  CHECK(w.checkpoint.async_inflight == 1);
  CHECK(w.checkpoint.async_buffer_bytes == 256ull << 20);
  CHECK(from(yaml, {"checkpoint.snapshot_bandwidth=16GiB"}).checkpoint.snapshot_bandwidth == 16ull << 30);
  const auto refused = [&](const std::vector<std::string>& overrides, const std::string& named) {
    const Error e = failure(yaml, overrides);
    CHECK(e.kind() == ErrorKind::config);
    CHECK(contains(e.what(), named));
  };
  refused({"checkpoint.snapshot_bandwidth=0"}, "checkpoint.snapshot_bandwidth");
  refused({"checkpoint.async_inflight=0"}, "checkpoint.async_inflight");
  refused({"checkpoint.async_buffer_bytes=1000"}, "checkpoint.async_buffer_bytes");
  refused({"workflow.train=false", "checkpoint.num_checkpoints_write=1"}, "does not train");
  refused({"checkpoint.num_checkpoints_read=1"}, "num_checkpoints_read");
  // Without async the same values are not looked at.
  CHECK_FALSE(from("checkpoint:\n  async_inflight: 0\n").checkpoint.async);
}
