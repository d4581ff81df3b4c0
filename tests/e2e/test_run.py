"""A real run end to end: generated NPZ files open in numpy; summary.json holds DLIO's keys
and sample counts that match the plan."""
import glob
import json
import math
import os
import zipfile

import numpy as np

from harness import TrainioTest

SMALL = ["dataset.data_folder=data", "dataset.num_files_train=24", "dataset.num_files_eval=6",
         "dataset.record_length_bytes=4096", "train.computation_time=0.002", "evaluation.eval_time=0.001",
         "train.epochs=2"]


class RunTest(TrainioTest):
    def test_generated_npz_files_open_in_numpy_with_the_expected_shapes(self):
        self.ok("generate", "default", "dataset.data_folder=data", "dataset.num_files_train=12",
                "dataset.num_samples_per_file=3", "dataset.record_length_bytes=10000", "dataset.num_subfolders_train=3",
                "dataset.num_files_eval=2")
        files = sorted(glob.glob(self.path("data/train/*/*.npz")))
        self.assertEqual(len(files), 12)
        self.assertTrue(os.path.exists(self.path("data/train/2/img_05_of_12.npz")))
        for f in files:
            with np.load(f) as npz:
                self.assertEqual(sorted(npz.files), ["x", "y"])
                x, y = npz["x"], npz["y"]
                self.assertEqual(x.shape, (100, 100, 3))   # floor(sqrt(10000)) per side, samples last
                self.assertEqual(x.dtype, np.uint8)
                self.assertEqual(y.shape, (3,))
                self.assertEqual(y.dtype, np.int64)
            self.assertIsNone(zipfile.ZipFile(f).testzip())   # every member's CRC is right
        self.assertEqual(len(glob.glob(self.path("data/valid/*/*.npz"))), 2)
        # Content is random, not zeros, and differs between files.
        a = np.load(files[0])["x"]
        b = np.load(files[1])["x"]
        self.assertGreater(len(np.unique(a)), 200)
        self.assertFalse(np.array_equal(a, b))

    def test_compressed_npz_and_npy_open_in_numpy(self):
        self.ok("generate", "default", "dataset.data_folder=z", "dataset.num_files_train=3", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.compression=zip", "dataset.compression_level=1",
                "dataset.num_samples_per_file=2", "dataset.record_length_bytes=20000", "dataset.num_subfolders_train=0")
        for f in sorted(glob.glob(self.path("z/train/*.npz"))):
            info = zipfile.ZipFile(f).infolist()
            self.assertEqual([i.compress_type for i in info], [zipfile.ZIP_DEFLATED] * 2)
            self.assertIsNone(zipfile.ZipFile(f).testzip())
            with np.load(f) as npz:
                self.assertEqual(npz["x"].shape, (141, 141, 2))
        self.ok("generate", "default", "dataset.data_folder=n", "dataset.num_files_train=3", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.format=npy", "dataset.num_samples_per_file=2",
                "dataset.record_dims=[10,20]", "dataset.record_element_type=int16", "dataset.num_subfolders_train=0")
        x = np.load(self.path("n/train/img_2_of_3.npy"))
        self.assertEqual(x.shape, (10, 20, 2))
        self.assertEqual(x.dtype, np.int16)
        self.ok("run", "default", "dataset.data_folder=n", "dataset.num_files_train=3", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.format=npy", "dataset.num_samples_per_file=2",
                "dataset.record_dims=[10,20]", "dataset.record_element_type=int16", "dataset.num_subfolders_train=0",
                "reader.batch_size=2", "train.computation_time=0", "--output", "o")

    def test_record_dims_and_element_type(self):
        self.ok("generate", "default", "dataset.data_folder=data", "dataset.num_files_train=2",
                "dataset.num_files_eval=0", "workflow.evaluation=false", "dataset.record_dims=[3,5,7]",
                "dataset.record_element_type=float32", "dataset.num_samples_per_file=2")
        x = np.load(self.path("data/train/0/img_0_of_2.npz"))["x"]
        self.assertEqual(x.shape, (3, 5, 7, 2))
        self.assertEqual(x.dtype, np.float32)

    def test_sizes_vary_by_file_with_a_stdev(self):
        self.ok("generate", "default", "dataset.data_folder=data", "dataset.num_files_train=20",
                "dataset.record_length_bytes=40000", "dataset.record_length_bytes_stdev=10000")
        shapes = {np.load(f)["x"].shape for f in glob.glob(self.path("data/train/*/*.npz"))}
        self.assertGreater(len(shapes), 5)

    def test_summary_has_dlio_keys_and_counts_that_match_the_plan(self):
        self.ok("run", "default", *SMALL, "--output", "out")
        s = self.summary("out")
        for key in ("start", "end", "num_accelerators", "num_hosts", "hostname", "metric", "num_files_train",
                    "num_files_eval", "num_samples_per_file", "host_cpu_count", "host_memory_GB",
                    "potential_caching", "epochs"):
            self.assertIn(key, s)
        m = s["metric"]
        for key in ("train_au_percentage", "train_au_mean_percentage", "train_au_stdev_percentage",
                    "train_throughput_samples_per_second", "train_throughput_mean_samples_per_second",
                    "train_throughput_stdev_samples_per_second", "train_io_mean_MB_per_second",
                    "train_io_stdev_MB_per_second", "train_au_meet_expectation", "eval_au_percentage",
                    "eval_throughput_samples_per_second"):
            self.assertIn(key, m)
        self.assertEqual(len(m["train_au_percentage"]), 2)
        self.assertIn(m["train_au_meet_expectation"], ("success", "fail"))
        # DLIO's MB/s: throughput x nominal record bytes / 2^20.
        self.assertAlmostEqual(m["train_io_mean_MB_per_second"],
                               m["train_throughput_mean_samples_per_second"] * 4096 / 2**20, places=6)
        t = s["trainio"]
        self.assertEqual(t["schema_version"], 1)
        self.assertEqual(t["workload"]["name"], "default")
        self.assertIn("reader.batch_size=4", " ".join(t["workload"]["overrides"]) + " reader.batch_size=4")
        self.assertEqual(t["workload"]["config"]["reader"]["batch_size"], 4)
        # 24 files, batch 4, 1 rank: 6 steps per epoch, every sample read once per epoch.
        plan = t["plan"]
        self.assertEqual(plan["train_steps_per_epoch_per_rank"], 6)
        self.assertEqual(plan["eval_steps_per_rank"], 6)
        for e in t["epochs"]:
            self.assertEqual(e["train"]["steps_per_rank"], 6)
            self.assertEqual(e["train"]["samples"], 24)
            self.assertEqual(e["train"]["sample_bytes"], 24 * 64 * 64)
            self.assertGreater(e["train"]["bytes_read"], e["train"]["sample_bytes"])  # numpy reads headers too
            self.assertEqual(e["train"]["io"]["open"]["count"], 24)
            self.assertEqual(e["eval"]["samples"], 6)
        self.assertEqual(t["train"]["samples"], 48)
        self.assertTrue(os.path.exists(self.path("out", "config.yaml")))
        # The log the results folder keeps holds what the console showed: every epoch's line and
        # the final table, beside the warnings.
        log = self.read_text("out", "dlio.log")
        self.assertEqual(log.count("epoch 1/2"), 1, log)
        self.assertEqual(log.count("epoch 2/2"), 1, log)
        self.assertIn("results", log)
        self.assertIn("summary.json", log)

    def test_au_falls_when_storage_cannot_keep_up(self):
        # A reader that sleeps 20 ms per sample feeding a 1 ms step cannot reach high AU.
        self.ok("run", "default", *SMALL, "reader.preprocess_time=0.02", "reader.read_threads=1", "--output", "slow")
        slow = self.summary("slow")["metric"]["train_au_mean_percentage"]
        self.ok("run", "default", *SMALL, "train.computation_time=0.05", "--output", "fast")
        fast = self.summary("fast")["metric"]["train_au_mean_percentage"]
        self.assertLess(slow, 30)
        self.assertGreater(fast, 80)

    def test_read_threads_zero_reads_in_the_training_thread(self):
        self.ok("run", "default", *SMALL, "reader.read_threads=0", "--output", "o")
        self.assertEqual(self.summary("o")["trainio"]["train"]["samples"], 48)

    def test_total_training_steps_caps_the_run(self):
        self.ok("run", "default", *SMALL, "train.total_training_steps=8", "train.epochs=5", "workflow.evaluation=false",
                "--output", "o")
        t = self.summary("o")["trainio"]
        self.assertEqual([e["train"]["steps_per_rank"] for e in t["epochs"]], [6, 2])

    def test_a_second_run_keeps_the_generated_files(self):
        self.ok("run", "default", *SMALL, "--output", "a")
        before = {f: os.stat(f).st_mtime_ns for f in glob.glob(self.path("data/train/*/*.npz"))}
        self.ok("run", "default", *SMALL, "--output", "b")
        after = {f: os.stat(f).st_mtime_ns for f in glob.glob(self.path("data/train/*/*.npz"))}
        self.assertEqual(before, after)
        g = self.summary("b")["trainio"]["generate"]
        self.assertEqual(g["files_kept"], 30)
        self.assertEqual(g["files_written"], 0)

    def test_keep_files_false_removes_the_dataset(self):
        self.ok("run", "default", *SMALL, "dataset.keep_files=false", "--output", "o")
        self.assertFalse(os.path.exists(self.path("data")))
        self.assertTrue(os.path.exists(self.path("o", "summary.json")))
