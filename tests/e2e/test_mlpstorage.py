"""trainio as MLPerf Storage's dlio_benchmark: mlpstorage (mlcommons/storage v2.0) runs
`mpirun ... <bin>/dlio_benchmark workload=NAME ++hydra.run.dir=R ++hydra.output_subdir=dlio_config
++workload.k=v ... --config-dir=<its configs/dlio>` and its `reports reportgen` then reads each
results folder's summary.json and Hydra's dlio_config/config.yaml and overrides.yaml. These tests
launch trainio through a link named dlio_benchmark with exactly those command-line forms and read
the results folder the way reportgen does (mlpstorage itself is not needed)."""
import os
import shlex
import subprocess

import yaml

from harness import MPI_ENV, TRAINIO, Result, TrainioTest

UNET3D_DATAGEN = """
model:
  name: unet3d
  type: cnn
  model_size: 499153191
framework: pytorch
workflow:
  generate_data: True
  train: False
  checkpoint: False
dataset:
  data_folder: data/unet3d/
  format: npz
  num_files_train: 168
  num_samples_per_file: 1
  record_length_bytes: 8192
  record_length_bytes_stdev: 1024
  record_length_bytes_resize: 2048
"""

UNET3D_H100 = """
model:
  name: unet3d
  type: cnn
  model_size: 499153191
framework: pytorch
workflow:
  generate_data: False
  train: True
  checkpoint: True
dataset:
  data_folder: data/unet3d/
  format: npz
  num_files_train: 168
  num_samples_per_file: 1
  record_length_bytes: 8192
  record_length_bytes_stdev: 1024
  record_length_bytes_resize: 2048
reader:
  data_loader: pytorch
  batch_size: 2
  read_threads: 2
  file_shuffle: seed
  sample_shuffle: seed
train:
  epochs: 2
  computation_time: 0.001
checkpoint:
  checkpoint_folder: checkpoints/unet3d
  checkpoint_after_epoch: 2
  epochs_between_checkpoints: 2
metric:
  au: 0.90
"""

LLAMA3_8B = """
model:
  name: llama_8b
  type: transformer
  num_layers: 2
  model_datatype: fp16
  optimizer_datatype: fp32
  parallelism:
    pipeline: 1
    tensor: 4
    zero_stage: 3
  transformer:
    vocab_size: 1024
    hidden_size: 64
    ffn_hidden_size: 128
    num_attention_heads: 4
    num_kv_heads: 2
framework: pytorch
workflow:
  generate_data: False
  train: False
  checkpoint: True
checkpoint:
  checkpoint_folder: checkpoints/llama_8b
  time_between_checkpoints: 0.01
  num_checkpoints_write: 10
  num_checkpoints_read: 10
  fsync: True
"""

# MLPerf Storage v1.0's spelling (DLIO 1.0): record_length, checkpoint.model_size, scalar model.
UNET3D_V1 = """
model: unet3d
framework: pytorch
workflow:
  generate_data: True
  train: False
dataset:
  data_folder: data/unet3d/
  format: npz
  num_files_train: 4
  num_samples_per_file: 1
  record_length: 20000
checkpoint:
  model_size: 499153191
"""


def reportgen_view(folder):
    """What mlpstorage's rules.BenchmarkResult/BenchmarkRun take from a results folder: summary.json,
    every dlio_config/*.yaml (yaml.Loader), the benchmark type and command from the workflow, the
    overrides under ++workload. (split on '=' into exactly two parts), and the system facts."""
    import json
    view = {"summary": None, "hydra": {}}
    summary = os.path.join(folder, "summary.json")
    if os.path.exists(summary):
        with open(summary) as f:
            view["summary"] = json.load(f)
    hydra_dir = os.path.join(folder, "dlio_config")
    for name in os.listdir(hydra_dir):
        if name.endswith(".yaml"):
            with open(os.path.join(hydra_dir, name)) as f:
                view["hydra"][name] = yaml.load(f, Loader=yaml.Loader)
    workload = view["hydra"].get("config.yaml", {}).get("workload", {})
    workflow = workload.get("workflow", {})
    gen, train, ckpt = workflow.get("generate_data", {}), workflow.get("train", {}), workflow.get("checkpoint", {})
    view["type"] = "training" if (gen or train) else "checkpointing" if ckpt else None
    view["command"] = "run_benchmark" if train else "datagen" if gen else None
    view["model"] = workload.get("model", {}).get("name")
    view["parameters"] = workload
    view["overrides"] = {}
    for param in view["hydra"].get("overrides.yaml", []):
        p, v = param.split("=")
        if p.startswith("++workload."):
            view["overrides"][p[len("++workload."):]] = v
    if view["summary"] is not None:
        s = view["summary"]
        view["num_processes"] = s["num_accelerators"]
        view["total_memory_bytes"] = sum(s["host_memory_GB"]) * 1024 ** 3
        view["total_cores"] = sum(s["host_cpu_count"])
    return view


class MlpstorageCommandLineTest(TrainioTest):
    def setUp(self):
        super().setUp()
        os.makedirs(self.path("bin"))
        os.symlink(os.path.abspath(TRAINIO), self.path("bin", "dlio_benchmark"))
        os.makedirs(self.path("configs", "dlio", "workload"))
        for name, text in (("unet3d_datagen", UNET3D_DATAGEN), ("unet3d_h100", UNET3D_H100),
                           ("llama3_8b", LLAMA3_8B), ("unet3d_v1", UNET3D_V1)):
            with open(self.path("configs", "dlio", "workload", name + ".yaml"), "w") as f:
                f.write(text)

    def dlio(self, command, ranks=2):
        """Runs a command line as mlpstorage's CommandExecutor does (shlex.split, no shell)."""
        prefix = f"mpirun -n {ranks} -host 127.0.0.1:{ranks} --oversubscribe --allow-run-as-root"
        proc = subprocess.run(shlex.split(f"{prefix} {self.path('bin', 'dlio_benchmark')} {command}"), cwd=self.dir,
                              env=dict(os.environ, **MPI_ENV), capture_output=True, text=True, timeout=300)
        return Result(proc, 0)

    def mlps_data_folder(self):
        # mlpstorage's add_datadir_param: <data-dir>/<model>, then empty train/ valid/ test/ in it.
        data = self.path("mlps_data", "unet3d")
        for sub in ("train", "valid", "test"):
            os.makedirs(os.path.join(data, sub))
        return data

    def test_datagen_run_and_checkpointing_as_mlpstorage_runs_them(self):
        data = self.mlps_data_folder()
        config_dir = self.path("configs", "dlio")
        results = self.path("results")

        # training datagen: results/training/unet3d/datagen/<datetime>
        gen_dir = os.path.join(results, "training", "unet3d", "datagen", "20250101_120000")
        os.makedirs(gen_dir)  # mlpstorage creates it (and writes its metadata there) itself
        r = self.dlio(f"workload=unet3d_datagen ++hydra.run.dir={gen_dir} ++hydra.output_subdir=dlio_config "
                      f"++workload.dataset.num_files_train=16 ++workload.dataset.data_folder={data} "
                      f"--config-dir={config_dir}")
        self.assertEqual(r.code, 0, r)
        self.assertEqual(len(os.listdir(os.path.join(data, "train"))), 16)
        self.assertFalse(os.path.exists(os.path.join(gen_dir, "summary.json")), "DLIO writes no summary for datagen")
        self.assertFalse(os.path.exists(os.path.join(gen_dir, "0_output.json")))
        self.assertTrue(os.path.exists(os.path.join(gen_dir, "dlio.log")))
        gen = reportgen_view(gen_dir)
        self.assertEqual(sorted(gen["hydra"]), ["config.yaml", "hydra.yaml", "overrides.yaml"])
        self.assertEqual(gen["type"], "training")
        self.assertEqual(gen["command"], "datagen")
        self.assertEqual(gen["hydra"]["hydra.yaml"]["hydra"]["run"]["dir"], gen_dir)
        self.assertEqual(gen["hydra"]["hydra.yaml"]["hydra"]["output_subdir"], "dlio_config")

        # training run: results/training/unet3d/run/<datetime>
        run_dir = os.path.join(results, "training", "unet3d", "run", "20250101_120100")
        os.makedirs(run_dir)
        ckpt = self.path("mlps_ckpt", "unet3d")
        r = self.dlio(f"workload=unet3d_h100 ++hydra.run.dir={run_dir} ++hydra.output_subdir=dlio_config "
                      f"++workload.dataset.num_files_train=16 ++workload.checkpoint.checkpoint_folder={ckpt} "
                      f"++workload.dataset.data_folder={data} --config-dir={config_dir}")
        self.assertEqual(r.code, 0, r)
        run = reportgen_view(run_dir)
        self.assertEqual(run["type"], "training")
        self.assertEqual(run["command"], "run_benchmark")
        self.assertEqual(run["model"], "unet3d")
        self.assertEqual(run["num_processes"], 2)
        self.assertGreater(run["total_memory_bytes"], 0)
        self.assertGreater(run["total_cores"], 0)
        self.assertEqual(run["hydra"]["overrides.yaml"],
                         ["workload=unet3d_h100", "++workload.dataset.num_files_train=16",
                          f"++workload.checkpoint.checkpoint_folder={ckpt}", f"++workload.dataset.data_folder={data}"])
        self.assertEqual(run["overrides"], {"dataset.num_files_train": "16", "checkpoint.checkpoint_folder": ckpt,
                                            "dataset.data_folder": data})
        # The keys mlpstorage's training rules compute with (calculate_training_data_size, odirect, workflow).
        params = run["parameters"]
        self.assertEqual(params["dataset"]["num_files_train"], 16)
        self.assertEqual(params["dataset"]["num_samples_per_file"], 1)
        self.assertEqual(params["dataset"]["record_length_bytes"], 8192)
        self.assertEqual(params["dataset"]["record_length"], 8192)  # DLIO's post-processor's name
        self.assertEqual(params["reader"]["batch_size"], 2)
        self.assertIs(params["reader"]["odirect"], False)
        self.assertIs(params["workflow"]["checkpoint"], True)
        metric = run["summary"]["metric"]
        self.assertEqual(len(metric["train_au_percentage"]), 2)
        self.assertIn(metric["train_au_meet_expectation"], ("success", "fail"))
        self.assertGreater(metric["train_throughput_mean_samples_per_second"], 0)
        self.assertIn("save_checkpoint_duration_mean_seconds", metric)
        self.assertRegex(run["summary"]["start"], r"^\d{4}-\d\d-\d\dT")
        for rank in (0, 1):
            out = self.read_json(run_dir, f"{rank}_output.json")
            for epoch in ("1", "2"):
                self.assertIn("MemTotal", out[epoch]["host_meminfo"], "DLIO records /proc/meminfo at each epoch")
        self.summary(run_dir)

        # checkpointing: results/checkpointing/llama3-8b/<datetime>; 2 ranks of a 4-rank model layout
        # (tensor 4, data 1), which mlpstorage runs in subset mode
        ck_dir = os.path.join(results, "checkpointing", "llama3-8b", "20250101_120200")
        os.makedirs(ck_dir)
        ck_folder = self.path("mlps_ckpt", "llama3-8b")
        r = self.dlio(f"workload=llama3_8b ++hydra.run.dir={ck_dir} ++hydra.output_subdir=dlio_config "
                      f"++workload.checkpoint.mode=subset ++workload.model.parallelism.data=1 "
                      f"++workload.checkpoint.num_checkpoints_read=2 ++workload.checkpoint.num_checkpoints_write=2 "
                      f"++workload.checkpoint.checkpoint_folder={ck_folder} --config-dir={config_dir}")
        self.assertEqual(r.code, 0, r)
        ck = reportgen_view(ck_dir)
        self.assertEqual(ck["type"], "checkpointing")
        self.assertEqual(ck["model"], "llama_8b")
        self.assertEqual(ck["num_processes"], 2)
        for key in ("save_checkpoint_io_mean_GB_per_second", "load_checkpoint_io_mean_GB_per_second",
                    "checkpoint_size_GB"):
            self.assertGreater(ck["summary"]["metric"][key], 0)
        self.assertEqual(ck["overrides"]["checkpoint.mode"], "subset")

        # What reportgen walks: folders with a *_metadata.json and a summary.json are runs. The
        # datagen folder has no summary, so only the training and checkpointing runs count.
        for d in (gen_dir, run_dir, ck_dir):
            with open(os.path.join(d, "training_20250101_metadata.json"), "w") as f:
                f.write("{}")
        runs = [root for root, _, files in os.walk(results)
                if any(f.endswith("_metadata.json") for f in files) and "summary.json" in files]
        self.assertEqual(sorted(runs), sorted([run_dir, ck_dir]))

    def test_link_in_the_build_folder(self):
        link = os.path.join(os.path.dirname(os.path.abspath(TRAINIO)), "dlio_benchmark")
        self.assertTrue(os.path.exists(link), "the build folder provides dlio_benchmark")
        self.assertEqual(os.path.realpath(link), os.path.realpath(TRAINIO))

    def test_config_dir_forms_hydra_notes_and_v1_names(self):
        # --config-dir DIR (two words), a Hydra setting without effect, DLIO 1.0's key names.
        r = self.dlio(f"workload=unet3d_v1 ++hydra.run.dir=out ++hydra.job.chdir=True "
                      f"--config-dir {self.path('configs', 'dlio')}", ranks=1)
        self.assertEqual(r.code, 0, r)
        self.assertIn("hydra.job.chdir", r.err)
        self.assertIn("dataset.record_length", r.err)  # the note about the old name
        sizes = {os.path.getsize(os.path.join(self.path("data", "unet3d", "train"), f))
                 for f in os.listdir(self.path("data", "unet3d", "train"))}
        self.assertEqual(len(sizes), 1)
        size = sizes.pop()
        self.assertTrue(20000 < size < 30000, size)  # one 20000-byte sample per file, not DLIO 2.0's 65536
        with open(self.path("out", ".hydra", "config.yaml")) as f:
            workload = yaml.safe_load(f)["workload"]
        self.assertEqual(workload["dataset"]["record_length_bytes"], 20000)
        self.assertEqual(workload["model"]["model_size_bytes"], 499153191)
        self.assertEqual(workload["model"]["name"], "unet3d")

    def test_errors_are_usage_errors(self):
        r = self.dlio("workload=unet3d_h100 --multirun", ranks=1)
        self.assertEqual(r.code, 2, r)
        self.assertIn("--multirun", r.err)
        self.assertIn("fix:", r.err)
        r = self.dlio("workload=no_such_workload --config-dir=" + self.path("configs", "dlio"), ranks=1)
        self.assertEqual(r.code, 2, r)
        self.assertIn("no_such_workload", r.err)
        r = self.dlio("dataset.num_files_train=4", ranks=1)
        self.assertEqual(r.code, 2, r)
        self.assertIn("++workload.dataset.num_files_train=4", r.err)


class HydraFilesOfTrainioRunsTest(TrainioTest):
    def test_every_run_writes_hydra_files(self):
        # Under trainio's own name too: .hydra/ holds the resolved workload and the overrides as Hydra spells them.
        self.ok("run", "default", "dataset.data_folder=data", "dataset.num_files_train=8", "++workload.train.epochs=1",
                "dataset.record_length_bytes=4096", "workflow.generate_data=True", "workflow.evaluation=True",
                "dataset.num_files_eval=2", "evaluation.eval_time=0.001", "train.computation_time=0.001",
                "--output", "o")
        with open(self.path("o", ".hydra", "overrides.yaml")) as f:
            overrides = yaml.safe_load(f)
        self.assertEqual(overrides[:3], ["workload=default", "++workload.dataset.data_folder=data",
                                         "++workload.dataset.num_files_train=8"])
        self.assertEqual(overrides[3], "++workload.train.epochs=1")
        with open(self.path("o", ".hydra", "config.yaml")) as f:
            workload = yaml.safe_load(f)["workload"]
        self.assertEqual(workload["dataset"]["num_files_train"], 8)
        self.assertIn("batch_size", workload["reader"])  # not overridden: the resolved value
        with open(self.path("o", ".hydra", "hydra.yaml")) as f:
            hydra = yaml.safe_load(f)["hydra"]
        self.assertEqual(hydra["run"]["dir"], "o")
        self.assertEqual(hydra["runtime"]["output_dir"], self.path("o"))
        self.assertEqual(hydra["runtime"]["choices"]["workload"], "default")
        # DLIO's eval verdict beside the training one.
        metric = self.summary("o")["metric"]
        expected = "success" if metric["eval_au_mean_percentage"] >= 90 else "fail"
        self.assertEqual(metric["eval_au_meet_expectation"], expected)

    def test_data_folder_of_empty_folders_is_empty(self):
        for sub in ("train", "valid", "test", "test/deeper"):
            os.makedirs(self.path("data", sub))
        self.ok("generate", "default", "dataset.data_folder=data", "dataset.num_files_train=4",
                "dataset.record_length_bytes=1024")
        self.assertEqual(sum(len(files) for _, _, files in os.walk(self.path("data", "train"))), 4)
        # A file anywhere below still makes it someone else's folder.
        os.makedirs(self.path("data2", "train"))
        with open(self.path("data2", "train", "keep.txt"), "w") as f:
            f.write("x")
        r = self.run_trainio("generate", "default", "dataset.data_folder=data2", "dataset.num_files_train=4")
        self.assertEqual(r.code, 2, r)
        self.assertIn("not a trainio dataset", r.err)
