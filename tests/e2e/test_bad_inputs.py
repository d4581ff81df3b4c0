"""Workload files and names that must be refused with one clear message, a fix and exit 2:
never a hang, never unbounded memory, never a write outside the configured folders."""
import glob
import os
import shutil
import stat

from harness import TrainioTest

SMALL = ["dataset.data_folder=data", "dataset.num_files_train=4", "dataset.num_files_eval=0",
         "workflow.evaluation=false", "dataset.record_length_bytes=4096", "train.computation_time=0",
         "train.epochs=1"]


class WorkloadFileTest(TrainioTest):
    def assert_usage_error(self, r, *needles):
        self.assertEqual(r.code, 2, r)
        for n in needles:
            self.assertIn(n, r.err)
        self.assertIn("fix:", r.err)
        self.assertNotIn("Traceback", r.err)

    def test_a_directory_is_not_a_workload(self):
        os.makedirs(self.path("wl"))
        self.assert_usage_error(self.run_trainio("config", self.path("wl"), timeout=20), "is a directory")

    def test_a_fifo_is_refused_without_waiting_for_a_writer(self):
        os.mkfifo(self.path("wl.yaml"))
        r = self.run_trainio("config", self.path("wl.yaml"), timeout=20)
        self.assert_usage_error(r, "wl.yaml", "not a regular file")

    def test_a_device_is_refused_without_reading_it_forever(self):
        r = self.run_trainio("config", "/dev/zero", timeout=20)
        self.assert_usage_error(r, "/dev/zero", "not a regular file")

    def test_a_huge_workload_file_is_refused(self):
        with open(self.path("big.yaml"), "w") as f:
            f.write("# " + "x" * (5 << 20) + "\n")
        self.assert_usage_error(self.run_trainio("config", self.path("big.yaml"), timeout=20), "big.yaml", "MiB")

    def test_an_unreadable_file_is_not_reported_as_missing(self):
        with open(self.path("locked.yaml"), "w") as f:
            f.write("dataset:\n  format: npz\n")
        os.chmod(self.path("locked.yaml"), 0)
        if os.access(self.path("locked.yaml"), os.R_OK):  # root reads anything: use a symlink loop instead
            os.remove(self.path("locked.yaml"))
            os.symlink("locked.yaml", self.path("locked.yaml"))
            r = self.run_trainio("config", self.path("locked.yaml"), timeout=20)
            self.assert_usage_error(r, "locked.yaml", "symbolic links")
        else:
            r = self.run_trainio("config", self.path("locked.yaml"), timeout=20)
            self.assert_usage_error(r, "locked.yaml", "ermission denied")
        self.assertNotIn("no shipped workload", r.err)

    def test_a_top_level_that_is_not_a_mapping_has_a_fix(self):
        with open(self.path("list.yaml"), "w") as f:
            f.write("- dataset\n- reader\n")
        r = self.run_trainio("config", self.path("list.yaml"), timeout=20)
        self.assertEqual(r.code, 2, r)
        self.assertIn("mapping", r.err)
        self.assertIn("fix:", r.err)

    def test_an_empty_override_value_is_an_error_not_a_reset(self):
        r = self.run_trainio("config", "default", "reader.batch_size=", timeout=20)
        self.assert_usage_error(r, "reader.batch_size")

    def test_a_very_long_unknown_key_is_rejected_quickly(self):
        r = self.run_trainio("config", "default", "q" * 20000 + ".x=1", timeout=20)
        self.assertEqual(r.code, 2, r)
        self.assertLess(r.seconds, 1.0, "rejecting one long key took %.1f s" % r.seconds)


class NamesStayInTheirFoldersTest(TrainioTest):
    def test_a_file_prefix_cannot_climb_out_of_the_data_folder(self):
        os.makedirs(self.path("deep", "er"))
        r = self.run_trainio("generate", "default", *SMALL, "dataset.data_folder=deep/er/data",
                             "dataset.file_prefix=../../escape", timeout=60)
        self.assertEqual(r.code, 2, r)
        self.assertIn("dataset.file_prefix", r.err)
        self.assertIn("fix:", r.err)
        self.assertEqual(sorted(os.listdir(self.path("deep"))), ["er"])
        self.assertEqual(os.listdir(self.path("deep", "er")), [])

    def test_the_log_file_lives_in_the_results_folder(self):
        escape = f"escape-{os.path.basename(self.dir)}.log"  # unique: a leftover cannot fake a pass
        for name in [f"../../{escape}", self.path("abs.log"), ".."]:
            r = self.run_trainio("run", "default", *SMALL, f"output.log_file={name}", "--output", "o", timeout=60)
            self.assertEqual(r.code, 2, (name, r))
            self.assertIn("output.log_file", r.err)
            self.assertIn("fix:", r.err)
        self.assertFalse(os.path.exists(self.path("abs.log")))
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(self.dir), escape)))

    def test_a_results_folder_inside_the_data_folder_is_refused_before_any_write(self):
        r = self.run_trainio("run", "default", *SMALL, "workflow.generate_data=true", "--output", "data/./o/",
                             timeout=60)
        self.assertEqual(r.code, 2, r)
        self.assertIn("inside the data folder", r.err)
        self.assertIn("fix:", r.err)
        self.assertFalse(os.path.exists(self.path("data")))


class DatasetFileTypesTest(TrainioTest):
    """Something other than a regular file where a dataset file should be: one message naming it and
    what it is, exit 1, never a hang (a FIFO blocks open() until a writer comes)."""

    FORMATS = {"npz": [], "hdf5": ["dataset.format=hdf5"],
               "tfrecord": ["dataset.format=tfrecord", "framework=tensorflow", "reader.data_loader=tensorflow"]}
    SHAPE = ["dataset.num_files_train=4", "dataset.num_files_eval=0", "workflow.evaluation=false",
             "dataset.num_subfolders_train=0"]

    def replace_one_file(self, fmt, make):
        self.ok("generate", "default", "dataset.data_folder=d", *self.SHAPE, *self.FORMATS[fmt])
        victim = sorted(glob.glob(self.path("d", "train", "*")))[1]
        os.remove(victim)
        make(victim)
        return os.path.basename(victim)

    def check_refused(self, fmt, kind, make):
        name = self.replace_one_file(fmt, make)
        for command, options in (("run", ["--output", "o"]), ("validate", [])):
            r = self.run_trainio(command, "default", "dataset.data_folder=d", "workflow.generate_data=false",
                                 *self.SHAPE, *self.FORMATS[fmt], *options, timeout=60)
            self.assertEqual(r.code, 1, r)
            self.assertIn(name, r.out + r.err)
            self.assertIn(f"is {kind}, not a regular file", r.out + r.err)
            if command == "run":
                self.assertIn("fix:", r.err)

    def test_a_fifo_stops_the_run_naming_it(self):
        for fmt in self.FORMATS:
            with self.subTest(fmt):
                self.check_refused(fmt, "a FIFO", os.mkfifo)
                shutil.rmtree(self.path("d"))

    def test_a_folder_stops_the_run_naming_it(self):
        self.check_refused("npz", "a folder", os.mkdir)

    def test_a_symlink_loop_and_an_overlong_name_have_a_fix(self):
        name = self.replace_one_file("npz", lambda p: os.symlink(os.path.basename(p), p))
        r = self.run_trainio("run", "default", "dataset.data_folder=d", "workflow.generate_data=false", *self.SHAPE,
                             "--output", "o")
        self.assertEqual(r.code, 1, r)
        self.assertIn(name, r.err)
        self.assertIn("fix: a symbolic link in the path points back at itself", r.err)
        r = self.run_trainio("run", "default", "dataset.data_folder=" + "x" * 300, *self.SHAPE, "--output", "o2")
        self.assertEqual(r.code, 1, r)
        self.assertIn("File name too long", r.err)
        self.assertIn("fix: a name in the path is longer than the file system allows", r.err)
