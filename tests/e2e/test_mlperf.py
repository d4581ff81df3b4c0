"""MLPerf Storage's rules: `trainio datasize`, the dataset-size warnings of `config` and `run`, and
`report --mlperf` judging each run's resolved workload against MLPerf's own values (edited, mixed and
valid sets)."""
import copy
import json
import os

from harness import TrainioTest

# unet3d_a100 scaled down to run in a second; the values these overrides change are put back to
# MLPerf's (CANONICAL) in the summaries the report tests write, as a full-size run would hold them.
SMALL_UNET = ["workflow.generate_data=True", "dataset.data_folder=data", "dataset.num_files_train=14",
              "dataset.record_length_bytes=4096", "dataset.record_length_bytes_stdev=0",
              "dataset.record_length_bytes_resize=0", "train.computation_time=0.001", "train.epochs=1",
              "workflow.checkpoint=False"]
CANONICAL = {("dataset", "record_length_bytes"): 146600628, ("dataset", "record_length_bytes_stdev"): 68341808,
             ("dataset", "record_length_bytes_resize"): 2097152, ("train", "computation_time"): 0.636,
             ("train", "epochs"): 5, ("workflow", "checkpoint"): True}


def write_runs(base, folder, values=(100, 100, 101, 99, 100, 100), edit=None, overrides=None):
    """Six consecutive runs (a warm-up and five) from one real summary, each with its own seed;
    edit(i, summary) changes run i."""
    for i, v in enumerate(values):
        s = copy.deepcopy(base)
        s["metric"]["train_throughput_mean_samples_per_second"] = v
        s["metric"]["train_au_meet_expectation"] = "success"
        s["start"] = f"2026-01-01T00:{i:02d}:00.000000"
        s["end"] = f"2026-01-01T00:{i:02d}:30.000000"
        s["trainio"]["workload"]["config"]["train"]["seed"] = 1000 + i
        if overrides is not None:
            s["trainio"]["workload"]["overrides"] = overrides
        if edit:
            edit(i, s)
        os.makedirs(os.path.join(folder, f"run{i}"))
        with open(os.path.join(folder, f"run{i}", "summary.json"), "w") as f:
            json.dump(s, f)


class MlperfReportTest(TrainioTest):
    def setUp(self):
        super().setUp()
        self.ok("run", "unet3d_a100", *SMALL_UNET, "--output", "real")
        self.base = self.summary("real")
        self.assertEqual(self.base["trainio"]["workload"]["name"], "unet3d_a100")
        for (section, key), value in CANONICAL.items():
            self.base["trainio"]["workload"]["config"][section][key] = value
        # mlpstorage passes its changes as overrides; only the resolved values count.
        self.base["trainio"]["workload"]["overrides"] = []

    def report(self, folder):
        r = self.run_trainio("report", "--mlperf", self.path(folder), "-o", self.path(folder + ".json"))
        return r, self.read_json(folder + ".json")["mlperf"]

    def test_a_valid_closed_set_passes(self):
        write_runs(self.base, self.path("valid"))
        r, m = self.report("valid")
        self.assertEqual(r.code, 0, r)
        self.assertEqual(m["division"], "closed")
        self.assertEqual(m["problems"], [])
        # CLOSED's own keys, and the per-run seed the rules ask for, even given as overrides.
        def closed(i, s):
            s["trainio"]["workload"]["config"]["reader"]["read_threads"] = 8
            s["trainio"]["workload"]["config"]["dataset"]["num_files_train"] = 56000
            s["trainio"]["workload"]["config"]["dataset"]["num_subfolders_train"] = 6
        write_runs(self.base, self.path("closed"), edit=closed,
                   overrides=["++workload.reader.read_threads=8", "train.seed=7", "dataset.num_files_train=56000"])
        r, m = self.report("closed")
        self.assertEqual(r.code, 0, r)
        self.assertEqual(m["division"], "closed")

    def test_open_changes(self):
        def npy(i, s):
            s["trainio"]["workload"]["config"]["dataset"]["format"] = "npy"
        write_runs(self.base, self.path("open"), edit=npy)
        r, m = self.report("open")
        self.assertEqual(r.code, 0, r)
        self.assertEqual(m["division"], "open")
        self.assertIn("OPEN division: changes dataset.format", r.out)

    def test_an_edited_workload_fails_whatever_the_overrides_say(self):
        def slower(i, s):
            s["trainio"]["workload"]["config"]["train"]["computation_time"] = 0.636 * 4
        write_runs(self.base, self.path("edited"), edit=slower)
        r, m = self.report("edited")
        self.assertEqual(r.code, 1, r)
        self.assertEqual(m["division"], "none")
        self.assertIn("train.computation_time = 2.544 (MLPerf: 0.636)", r.out)
        def batch(i, s):
            s["trainio"]["workload"]["config"]["reader"]["batch_size"] = 14
        write_runs(self.base, self.path("batch"), edit=batch, overrides=["dataset.num_files_train=14"])
        r, m = self.report("batch")
        self.assertEqual(m["division"], "none")
        self.assertIn("reader.batch_size = 14 (MLPerf: 7)", r.out)

    def test_a_workload_that_is_not_mlperfs_fails(self):
        def default(i, s):
            s["trainio"]["workload"]["name"] = "default"
        write_runs(self.base, self.path("default"), edit=default)
        r, m = self.report("default")
        self.assertEqual(r.code, 1, r)
        self.assertEqual(m["division"], "none")
        self.assertIn("not an MLPerf Storage benchmark: default", r.out)

    def test_sets_that_mix_configurations_fail(self):
        def threads(i, s):
            if i == 4:
                s["trainio"]["workload"]["config"]["reader"]["read_threads"] = 8
        write_runs(self.base, self.path("threads"), edit=threads)
        r, m = self.report("threads")
        self.assertEqual(r.code, 1, r)
        self.assertIn("the runs mix configurations: reader.read_threads (4 in run 1, 8 in run 4)", r.out)
        def generated_first(i, s):  # generating the data in the first run changes nothing measured
            s["trainio"]["workload"]["config"]["workflow"]["generate_data"] = i == 1
        write_runs(self.base, self.path("generated"), edit=generated_first)
        self.assertEqual(self.report("generated")[0].code, 0)
        def ranks(i, s):
            if i == 2:
                s["num_accelerators"] = 2
        write_runs(self.base, self.path("ranks"), edit=ranks)
        r, m = self.report("ranks")
        self.assertEqual(r.code, 1, r)
        self.assertIn("num_accelerators (1 in run 1, 2 in run 2)", r.out)

    def test_seeds_warmup_and_run_count(self):
        def same_seed(i, s):
            s["trainio"]["workload"]["config"]["train"]["seed"] = 5
        write_runs(self.base, self.path("same-seed"), edit=same_seed)
        r, m = self.report("same-seed")
        self.assertEqual(r.code, 1, r)
        self.assertIn("share a seed", r.out)
        self.assertIn("train.seed=N", r.out)
        write_runs(self.base, self.path("six"))
        r, _ = self.report("six")
        a = self.read_json("six.json")
        self.assertTrue(a["warmup"].endswith("run0"))
        self.assertEqual(len(a["runs"]), 5)
        r = self.run_trainio("report", "--mlperf", self.path("real"))
        self.assertEqual(r.code, 2, r)
        self.assertIn("warm-up", r.err)


class DatasizeTest(TrainioTest):
    def test_mlperf_example(self):
        # REFERENCE: 2 hosts of 128 GB, 16 A100s, unet3d -> 56,000 files.
        r = self.ok("datasize", "unet3d_a100", "--accelerators", "16", "--hosts", "2", "--host-memory", "128")
        self.assertIn("500 steps x batch 7 x 16 accelerators:  56,000 samples", r.out)
        # 5 x 2 x 128 GiB / 146,600,628 B = 9,375.03 samples, rounded up.
        self.assertIn("9,376 samples", r.out)
        self.assertIn("files: 56,000 (1 sample per file)", r.out)
        self.assertIn("subfolders: 6", r.out)
        self.assertIn(f"({56000 * 146600628} bytes)", r.out)
        self.assertIn("override: dataset.num_files_train=56000 dataset.num_subfolders_train=6\n", r.out)

    def test_memory_bound_and_samples_per_file(self):
        # resnet50: 8 accelerators x 400 x 500 = 1.6 M samples; 5 x 512 GiB / 114,660.07 B = 23,973,290
        # samples -> 19,164 files of 1,251.
        r = self.ok("datasize", "resnet50_h100", "-n", "8", "--host-memory", "512GiB")
        self.assertIn("1,600,000 samples", r.out)
        self.assertIn("23,973,290 samples", r.out)
        self.assertIn("override: dataset.num_files_train=19164 dataset.num_subfolders_train=2\n", r.out)
        small = self.ok("datasize", "cosmoflow_h100", "-n", "1", "--host-memory", "1MiB")
        self.assertIn("override: dataset.num_files_train=500\n", small.out)

    def test_bad_input(self):
        r = self.run_trainio("datasize", "unet3d_a100", "-n", "4", "--host-memory", "lots")
        self.assertEqual(r.code, 2, r)
        self.assertIn("--host-memory", r.err)
        self.assertIn("fix:", r.err)
        r = self.run_trainio("datasize", "unet3d_a100")
        self.assertEqual(r.code, 2, r)

    def test_config_and_run_warn_below_the_rule(self):
        r = self.ok("config", "unet3d_a100", "--ranks", "4")
        self.assertIn("warning: MLPerf Storage asks for at least 14,000 files", r.out)
        self.assertIn("this dataset has 168 files", r.out)
        self.assertNotIn("warning: MLPerf", self.ok("config", "unet3d_a100", "--ranks", "4",
                                                     "dataset.num_files_train=1000000").out)
        self.assertNotIn("warning: MLPerf", self.ok("config", "default").out)
        r = self.ok("run", "unet3d_a100", *SMALL_UNET, "--output", "o")
        self.assertIn("MLPerf Storage asks for at least", r.err + r.out)
        self.assertIn("this dataset has 14 files", r.err + r.out)


class MlperfCheckpointReportTest(TrainioTest):
    def test_closed_process_counts(self):
        llm = ["model.num_layers=2", "model.transformer.vocab_size=256", "model.transformer.hidden_size=64",
               "model.transformer.ffn_hidden_size=128", "model.transformer.num_attention_heads=4",
               "model.transformer.num_kv_heads=2", "checkpoint.num_checkpoints_write=1",
               "checkpoint.num_checkpoints_read=1", "checkpoint.time_between_checkpoints=0"]
        self.ok("run", "llama3_8b", *llm, "--output", "real")
        base = self.summary("real")
        config = base["trainio"]["workload"]["config"]
        config["model"]["num_layers"] = 32
        config["model"]["transformer"].update(vocab_size=128256, hidden_size=4096, ffn_hidden_size=14336,
                                              num_attention_heads=32, num_kv_heads=8)
        config["checkpoint"].update(num_checkpoints_write=10, num_checkpoints_read=10, time_between_checkpoints=5)
        base["metric"].pop("train_au_meet_expectation", None)

        def ranks(n):
            def edit(i, s):
                s["num_accelerators"] = n
            return edit
        write_runs(base, self.path("eight"), edit=ranks(8))
        r = self.run_trainio("report", "--mlperf", self.path("eight"), "-o", self.path("eight.json"))
        m = self.read_json("eight.json")["mlperf"]
        self.assertEqual(m["division"], "closed", r)
        self.assertEqual(r.code, 0, r)
        write_runs(base, self.path("four"), edit=ranks(4))
        r = self.run_trainio("report", "--mlperf", self.path("four"), "-o", self.path("four.json"))
        self.assertEqual(self.read_json("four.json")["mlperf"]["division"], "open", r)
        self.assertIn("4 ranks (CLOSED: 8", r.out)
