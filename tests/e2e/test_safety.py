"""Bad input and bad states: clear errors, the right exit code, and nothing lost or half-written."""
import glob
import json
import os
import re
import unittest

import harness
from harness import TrainioTest

SMALL = ["dataset.data_folder=data", "dataset.num_files_train=16", "dataset.num_files_eval=0",
         "workflow.evaluation=false", "dataset.num_subfolders_train=0", "dataset.record_length_bytes=4096",
         "train.computation_time=0.001", "train.epochs=1"]


class SafetyTest(TrainioTest):
    def test_refuses_to_generate_into_a_foreign_folder(self):
        os.makedirs(self.path("data"))
        with open(self.path("data", "precious.txt"), "w") as f:
            f.write("keep me")
        r = self.run_trainio("generate", "default", *SMALL)
        self.assertEqual(r.code, 2, r)
        self.assertIn("not a trainio dataset", r.err)
        self.assertIn("--force", r.err)
        self.assertEqual(os.listdir(self.path("data")), ["precious.txt"])
        # --force writes the dataset and leaves the other file alone; a file under the name of
        # one of its temporaries is replaced, not an error.
        os.makedirs(self.path("data", "train"))
        with open(self.path("data/train/.img_01_of_16.npz.trainio-tmp"), "w") as f:
            f.write("partial")
        self.ok("generate", "default", *SMALL, "--force")
        self.assertEqual(self.read_text("data", "precious.txt"), "keep me")
        self.assertEqual(len(glob.glob(self.path("data/train/*.npz"))), 16)
        self.assertEqual(glob.glob(self.path("data/train/.*")), [])

    def test_run_without_a_dataset_says_how_to_make_one(self):
        r = self.run_trainio("run", "default", *SMALL, "workflow.generate_data=false", "--output", "o")
        self.assertEqual(r.code, 1, r)
        self.assertIn("no dataset in 'data'", r.err)
        self.assertIn("trainio generate", r.err)

    def test_run_refuses_a_dataset_made_for_other_settings(self):
        self.ok("generate", "default", *SMALL)
        r = self.run_trainio("run", "default", *SMALL, "dataset.record_length_bytes=8192",
                             "workflow.generate_data=false", "--output", "o")
        self.assertEqual(r.code, 2, r)
        self.assertIn("dataset.record_length_bytes=4096", r.err)
        self.assertIn("dataset.record_length_bytes=8192", r.err)

    def test_generation_for_new_settings_replaces_the_old_files(self):
        self.ok("generate", "default", *SMALL, "dataset.num_files_train=20")
        self.ok("generate", "default", *SMALL)
        self.assertEqual(len(glob.glob(self.path("data/train/*.npz"))), 16)
        self.assertEqual(glob.glob(self.path("data/train/*_of_20.npz")), [])

    def test_generation_for_new_settings_replaces_the_old_files_in_subfolders_too(self):
        # The old files are removed as each folder is read (no listing of millions of names).
        sub = [a for a in SMALL if not a.startswith("dataset.num_subfolders_train")] + ["dataset.num_subfolders_train=2"]
        self.ok("generate", "default", *sub, "dataset.num_files_train=20")
        self.assertEqual(len(glob.glob(self.path("data/train/*/*_of_20.npz"))), 20)
        self.ok("generate", "default", *sub)
        self.assertEqual(glob.glob(self.path("data/train/*/*_of_20.npz")), [])
        self.assertEqual(len(glob.glob(self.path("data/train/*/*_of_16.npz"))), 16)

    def test_an_interrupted_generation_resumes(self):
        self.ok("generate", "default", *SMALL)
        files = sorted(glob.glob(self.path("data/train/*.npz")))
        good_size = os.path.getsize(files[0])
        # Simulate a crash: one file cut short, a temporary left behind, the marker not complete.
        os.truncate(files[3], 100)
        with open(self.path("data/train/.img_04_of_16.npz.trainio-tmp"), "w") as f:
            f.write("partial")
        marker = self.read_json("data/.trainio-dataset.json")
        marker["state"] = "generating"
        self.write_json(marker, "data/.trainio-dataset.json")
        # A run refuses an incomplete dataset ...
        r = self.run_trainio("run", "default", *SMALL, "workflow.generate_data=false", "--output", "o")
        self.assertEqual(r.code, 1, r)
        self.assertIn("incomplete", r.err)
        # ... and generating again repairs exactly what is missing.
        r = self.ok("generate", "default", *SMALL)
        self.assertIn("1 files written, 15 kept", r.out)
        self.assertEqual(os.path.getsize(files[3]), good_size)
        self.assertEqual(glob.glob(self.path("data/train/.*")), [])

    def test_a_generation_killed_midway_resumes_into_a_valid_dataset(self):
        """Small NPZ files go under their final names in one write (no rename): a generation
        killed at any point leaves at most a file cut short, which the next generation rewrites."""
        import signal
        import subprocess
        import time
        args = ["dataset.data_folder=data", "dataset.num_files_train=3000", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.num_subfolders_train=0", "dataset.record_length_bytes=20000",
                "--no-progress"]
        p = subprocess.Popen([harness.TRAINIO, "generate", "default", *args], cwd=self.dir,
                             env=dict(os.environ, **harness.MPI_ENV), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while len(glob.glob(self.path("data/train/*.npz"))) < 300 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        p.send_signal(signal.SIGKILL)
        p.wait()
        written = len(glob.glob(self.path("data/train/*.npz")))
        self.assertGreater(written, 0)
        if written < 3000:  # killed before the end: the marker says so
            self.assertEqual(self.read_json("data/.trainio-dataset.json")["state"], "generating")
        r = self.ok("generate", "default", *args)
        m = re.search(r"([\d,]+) files written, ([\d,]+) kept", r.out)
        rewritten, kept = (int(g.replace(",", "")) for g in m.groups())
        self.assertEqual(rewritten + kept, 3000)
        self.assertGreaterEqual(kept, written - 1)  # every file but the one being written when killed
        self.ok("validate", "default", *args)
        self.assertEqual(glob.glob(self.path("data/train/.*")), [])

    def test_a_truncated_file_fails_the_run_naming_the_file(self):
        self.ok("generate", "default", *SMALL)
        victim = self.path("data/train/img_05_of_16.npz")
        os.truncate(victim, 2000)
        r = self.run_trainio("run", "default", *SMALL, "workflow.generate_data=false", "--output", "o")
        self.assertEqual(r.code, 1, r)
        self.assertIn("img_05_of_16.npz", r.err)
        self.assertIn("regenerate", r.err)
        self.assertFalse(os.path.exists(self.path("o", "summary.json")))
        # per_rank.csv, written as the phases end, is left neither whole nor under its temporary name.
        self.assertEqual([n for n in os.listdir(self.path("o")) if "per_rank" in n], [])

    def test_results_are_never_written_over(self):
        self.ok("run", "default", *SMALL, "--output", "o")
        first = self.read_text("o", "summary.json")
        r = self.run_trainio("run", "default", *SMALL, "--output", "o")
        self.assertEqual(r.code, 2, r)
        self.assertIn("already holds a run", r.err)
        self.assertEqual(self.read_text("o", "summary.json"), first)

    def test_a_full_disk_names_the_file_and_leaves_no_half_file(self):
        mount = self.tmpfs("small", "size=256k")
        # Past the check of the free space before generating: the disk fills while writing.
        r = self.run_trainio("generate", "default", *SMALL, f"dataset.data_folder={mount}/data",
                             "dataset.record_length_bytes=65536", "dataset.check_free_space=false")
        self.assertEqual(r.code, 1, r)
        self.assertIn("No space left on device", r.err)
        self.assertIn(".npz", r.err)
        self.assertIn("free space", r.err)
        expected = None
        for f in glob.glob(f"{mount}/data/train/*"):
            self.assertFalse(os.path.basename(f).startswith("."), f"temporary left behind: {f}")
            size = os.path.getsize(f)
            expected = expected or size
            self.assertEqual(size, expected)  # only complete files carry a dataset name
        marker = self.read_json(f"{mount}/data/.trainio-dataset.json")
        self.assertEqual(marker["state"], "generating")

    def test_a_trace_that_does_not_fit_fails_the_run_and_leaves_no_half_trace(self):
        mount = self.tmpfs("small", "size=256k")
        # Every storage call traced over 5 epochs: about 400 KB of trace, the results 130 KB.
        r = self.run_trainio("run", "default", *SMALL, "train.epochs=5", "reader.batch_size=1",
                             "train.computation_time=0", "--trace", "--output", f"{mount}/o")
        self.assertEqual(r.code, 1, r)
        self.assertIn("No space left on device", r.err)
        self.assertIn("trace-0-of-1.pfw", r.err)
        self.assertEqual([f for f in os.listdir(f"{mount}/o") if "pfw" in f], [], "no trace, whole or half")


class FailureReportingTest(TrainioTest):
    def test_a_damaged_marker_is_named_as_damaged(self):
        self.ok("generate", "default", *SMALL)
        with open(self.path("data", ".trainio-dataset.json"), "w") as f:
            f.write('{"trainio_dataset": 1, "state": "comp')
        r = self.run_trainio("run", "default", *SMALL, "workflow.generate_data=false", "--output", "o")
        self.assertEqual(r.code, 1, r)
        self.assertIn("damaged", r.err)
        self.assertIn(".trainio-dataset.json", r.err)
        self.assertNotIn("did not finish", r.err)
        self.assertIn("fix:", r.err)
        self.assertFalse(os.path.exists(self.path("o", "summary.json")))

    def test_the_log_file_of_a_failed_run_holds_the_error(self):
        r = self.run_trainio("run", "default", *SMALL, "workflow.generate_data=false", "--output", "o")
        self.assertEqual(r.code, 1, r)
        log = self.read_text("o", "dlio.log")
        self.assertIn("no dataset in 'data'", log)
        self.assertIn("fix:", log)
