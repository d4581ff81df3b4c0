"""Sizes and figures that mean what they say: the sample size record_dims define is the one DLIO's
MB/s uses; sizes and counts that overflow are refused before any I/O; a dataset larger than the
free space is refused before a file is written; figures DLIO's formulas cannot give are null, with
a note, and no verdict is drawn from them."""
import os
import re
import shutil
import subprocess

from harness import TrainioTest

NPZ = ["framework=pytorch", "reader.data_loader=pytorch", "dataset.format=npz", "dataset.data_folder=data"]


def dataset_files(root):
    """Data files and interrupted temporaries under a data folder."""
    found = []
    for folder, _, names in os.walk(root):
        found += [os.path.join(folder, n) for n in names if "_of_" in n or n.endswith(".trainio-tmp")]
    return found


class SizesTest(TrainioTest):
    def test_record_dims_set_the_size_behind_dlio_mb_per_second(self):
        self.ok("run", "default", *NPZ, "workflow.generate_data=true", "dataset.num_files_train=16",
                "dataset.record_dims=[10,20]", "dataset.record_length_bytes=4096", "reader.batch_size=2",
                "train.computation_time=0.001", "--output", "o")
        s = self.summary("o")
        m = s["metric"]
        self.assertGreater(m["train_throughput_mean_samples_per_second"], 0)
        self.assertAlmostEqual(m["train_io_mean_MB_per_second"],
                               m["train_throughput_mean_samples_per_second"] * 200 / 2**20, places=6)
        self.assertEqual(s["trainio"]["plan"]["nominal_record_bytes"], 200)
        self.assertEqual(s["trainio"]["plan"]["train_dataset_bytes"], 16 * 200)

    def test_sizes_and_counts_that_overflow_are_refused_naming_the_key(self):
        cases = [
            (["dataset.record_length_bytes=1e300"], ["dataset.record_length_bytes"]),
            (["dataset.record_length_bytes=1e19"], ["dataset.record_length_bytes"]),
            (["dataset.record_dims=[4294967296,4294967296,4294967296]"], ["dataset.record_dims"]),
            (["dataset.record_length_bytes_stdev=1e300"], ["dataset.record_length_bytes_stdev"]),
            (["dataset.num_files_train=4294967296", "dataset.num_samples_per_file=4294967296"],
             ["dataset.num_files_train", "dataset.num_samples_per_file"]),
        ]
        for overrides, keys in cases:
            # `config` first, and stop at the first failure (no subTest): a build that accepts the
            # value must fail here, not go on to write 10^19-byte samples.
            for command in (["config", "default", *NPZ], ["run", "default", *NPZ, "workflow.generate_data=true"]):
                r = self.run_trainio(*command, *overrides, timeout=60)
                self.assertEqual(r.code, 2, f"{command[0]} {overrides}: {r}")
                for key in keys:
                    self.assertIn(key, r.err)
                self.assertIn("fix:", r.err)
                self.assertNotIn("PASS", r.out)
        self.assertFalse(os.path.exists(self.path("data")), "nothing may be written for a refused workload")

    def test_a_dataset_larger_than_the_free_space_is_refused_before_writing(self):
        os.makedirs(self.path("data"))
        st = os.statvfs(self.path("data"))
        free = st.f_bavail * st.f_frsize
        # Four files of one sample, each about half the free space: twice what fits.
        side = int((free // 2) ** 0.5) + 1
        r = self.run_trainio("generate", "default", *NPZ, "dataset.num_files_train=4", f"dataset.record_dims=[{side},{side}]",
                             timeout=20)
        self.assertEqual(r.code, 1, r)
        numbers = [int(n.replace(",", "")) for n in re.findall(r"(\d[\d,]*) bytes", r.err)]
        self.assertGreaterEqual(len(numbers), 2, r.err)
        needed, available = numbers[0], numbers[1]
        self.assertGreaterEqual(needed, 4 * side * side)
        self.assertLess(abs(available - free), max(free // 10, 1 << 30), r.err)  # the free space, as statvfs says
        self.assertIn("data", r.err)
        self.assertIn("fix:", r.err)
        self.assertEqual(dataset_files(self.path("data")), [])
        # Two ranks: each counts its own files; the job fails together, saying it once.
        r = self.run_trainio("generate", "default", *NPZ, "dataset.num_files_train=4", f"dataset.record_dims=[{side},{side}]",
                             ranks=2, timeout=60)
        self.assertEqual(r.code, 1, r)
        self.assertEqual(r.err.count("does not fit"), 1, r.err)
        self.assertEqual(dataset_files(self.path("data")), [])

    def test_resumed_generation_counts_only_the_files_still_to_write(self):
        # A 64 MiB file system (tmpfs; needs root) and a dataset of 4 x 20 MiB: refused when empty,
        # generated when 3 of its files are there already (sparse copies: they take no space).
        self.tmpfs("fs", "size=64m")
        big = [*NPZ, "dataset.num_files_train=4", "dataset.num_files_eval=0", "workflow.evaluation=false",
               "dataset.record_length_bytes=20971520"]
        r = self.run_trainio("generate", "default", *big, "dataset.data_folder=fs/data", timeout=60)
        self.assertEqual(r.code, 1, r)
        self.assertIn("4 files still to write", r.err)
        self.assertEqual(dataset_files(self.path("fs", "data")), [])
        # The same dataset, complete, elsewhere; 3 of its files (sparse) and its marker into the tmpfs.
        self.ok("generate", "default", *big, "dataset.data_folder=full")
        shutil.copy(self.path("full", ".trainio-dataset.json"), self.path("fs", "data", ".trainio-dataset.json"))
        files = sorted(os.path.relpath(f, self.path("full")) for f in dataset_files(self.path("full")))
        self.assertEqual(len(files), 4)
        for rel in files[:3]:
            with open(self.path("fs", "data", rel), "wb") as f:
                f.truncate(os.path.getsize(self.path("full", rel)))
        r = self.ok("generate", "default", *big, "dataset.data_folder=fs/data", timeout=60)
        self.assertIn("1 files written, 3 kept", r.out + r.err)

    def test_two_steps_per_epoch_give_null_throughput_with_a_note_and_no_verdict(self):
        args = [*NPZ, "workflow.generate_data=true", "dataset.num_files_train=4", "dataset.record_length_bytes=4096",
                "reader.batch_size=2", "train.epochs=2", "train.computation_time=0.001"]
        c = self.ok("config", "default", *args)
        self.assertRegex(c.out, r"# warning: 2 training steps per epoch per rank")
        self.assertIn("train_throughput", c.out)
        r = self.ok("run", "default", *args, "--output", "o")
        s = self.summary("o")
        m = s["metric"]
        self.assertEqual(m["train_throughput_samples_per_second"], [None, None])
        for key in ("train_throughput_mean_samples_per_second", "train_throughput_stdev_samples_per_second",
                    "train_io_mean_MB_per_second", "train_io_stdev_MB_per_second", "train_au_meet_expectation"):
            self.assertIsNone(m[key], key)
        # AU is defined: one step is left after the first is excluded.
        self.assertEqual(len(m["train_au_percentage"]), 2)
        self.assertTrue(all(isinstance(v, float) for v in m["train_au_percentage"]))
        notes = {n["figure"]: n["cause"] for n in s["trainio"]["notes"]}
        self.assertIn("metric.train_throughput_mean_samples_per_second", notes)
        self.assertIn("2 steps", notes["metric.train_throughput_mean_samples_per_second"])
        self.assertIn("metric.train_au_meet_expectation", notes)
        for e in s["trainio"]["epochs"]:
            self.assertIsNone(e["train"]["dlio_throughput_samples_per_second"])
        self.assertNotIn("PASS", r.out)
        self.assertNotIn("FAIL", r.out)
        self.assertIn("no verdict", r.out)
        out = self.read_json("o", "0_output.json")
        self.assertIsNone(out["1"]["throughput"]["block1"])
        with open(self.path("o", "per_epoch.csv")) as f:
            rows = f.read().splitlines()
        header = rows[0].split(",")
        first = dict(zip(header, rows[1].split(",")))
        self.assertEqual(first["dlio_throughput_samples_per_second"], "")
        # `report` draws no verdict from it either, and MLPerf's checks count it as a problem.
        rep = self.ok("report", "o")
        self.assertIn("no verdict", rep.out)
        self.assertNotIn("PASS", rep.out)
        self.assertNotIn("FAIL", rep.out)
        for i in range(6):  # MLPerf's warm-up and 5 runs: this one six times
            shutil.copytree(self.path("o"), self.path("six", f"run{i}"))
        m = self.run_trainio("report", "--mlperf", "six")
        self.assertEqual(m.code, 1, m)
        self.assertIn("has no AU verdict", m.out + m.err)


class LabelsTest(TrainioTest):
    """Writers stream a file's labels from a fixed buffer: files of millions of samples hold every
    label, and the real readers agree."""

    SAMPLES = 8_000_000  # 61 MiB of labels held whole, as the writers once did
    SHAPE = ["dataset.num_files_train=1", f"dataset.num_samples_per_file={SAMPLES}", "dataset.record_length_bytes=1",
             "dataset.record_length_bytes_stdev=0", "dataset.num_files_eval=0", "workflow.evaluation=false"]

    def check_with_python(self, script):
        proc = subprocess.run(["/usr/bin/python3", "-c", script], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout.split()

    def test_hdf5_labels_over_several_pieces(self):
        peak = self.peak_rss_mib("generate", "default", "dataset.format=hdf5", "dataset.data_folder=d", *self.SHAPE)
        self.assertLess(peak, 64, "the labels were held in memory")
        out = self.check_with_python(
            "import h5py, numpy, glob\n"
            f"f = h5py.File(glob.glob('{self.path('d')}/train/**/*.hdf5', recursive=True)[0])\n"
            "l = f['labels'][:]\nprint(l.shape[0], l.dtype, numpy.count_nonzero(l))")
        self.assertEqual(out, [str(self.SAMPLES), "int64", "0"])

    def test_compressed_npz_labels_are_deflated_as_they_stream(self):
        peak = self.peak_rss_mib("generate", "default", "dataset.format=npz", "dataset.compression=zip",
                                 "dataset.data_folder=d", *self.SHAPE)
        self.assertLess(peak, 64, "the labels were held in memory")
        out = self.check_with_python(
            "import numpy, glob\n"
            f"z = numpy.load(glob.glob('{self.path('d')}/train/**/*.npz', recursive=True)[0])\n"
            "y = z['y']\nprint(y.shape[0], y.dtype, numpy.count_nonzero(y), z['x'].shape[-1])")
        self.assertEqual(out, [str(self.SAMPLES), "int64", "0", str(self.SAMPLES)])
        self.ok("validate", "default", "dataset.format=npz", "dataset.compression=zip", "dataset.data_folder=d",
                *self.SHAPE)
