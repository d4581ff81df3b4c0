"""`trainio validate` finds every broken file: missing, cut short, corrupted; on one or several ranks."""
import os

from harness import TrainioTest, corrupt

DATA = ["dataset.data_folder=v", "dataset.num_files_train=9", "dataset.num_files_eval=3",
        "dataset.num_subfolders_train=0", "dataset.record_length_bytes=8192"]


class ValidateTest(TrainioTest):
    def test_a_good_dataset_passes(self):
        self.ok("generate", "default", *DATA)
        r = self.ok("validate", "default", *DATA)
        self.assertIn("checked 12 files", r.out)
        self.assertIn("all good", r.out)

    def check_finds_each_problem(self, ranks, fmt_args, ext):
        self.ok("generate", "default", *DATA, *fmt_args, ranks=ranks)
        os.truncate(self.path(f"v/train/img_2_of_9.{ext}"), 300)
        corrupt(self.path(f"v/train/img_4_of_9.{ext}"), 5000)
        os.remove(self.path(f"v/valid/1/img_1_of_3.{ext}"))
        r = self.run_trainio("validate", "default", *DATA, *fmt_args, ranks=ranks)
        self.assertEqual(r.code, 1, r)
        lines = r.out.strip().splitlines()
        self.assertIn("img_2_of_9", lines[0])
        self.assertIn("missing", [l for l in lines if "img_1_of_3" in l][0])
        self.assertTrue(lines[-1].endswith("problems"), r.out)
        return lines

    def test_npz_problems_on_two_ranks(self):
        lines = self.check_finds_each_problem(2, [], "npz")
        self.assertIn("CRC-32", [l for l in lines if "img_4_of_9" in l][0])
        self.assertIn("3 problems", lines[-1])

    def test_npy_problems(self):
        lines = self.check_finds_each_problem(None, ["dataset.format=npy"], "npy")
        self.assertIn("2 problems", lines[-1])  # a flipped data byte is invisible to NPY, which has no checksum

    def test_compressed_npz_corruption_is_found(self):
        lines = self.check_finds_each_problem(None, ["dataset.compression=zip"], "npz")
        self.assertIn("3 problems", lines[-1])

    def test_a_dataset_for_other_settings_is_reported(self):
        self.ok("generate", "default", *DATA)
        r = self.run_trainio("validate", "default", *DATA[:-1], "dataset.record_length_bytes=4096")
        self.assertEqual(r.code, 1, r)
        self.assertIn("dataset.record_length_bytes=8192", r.out)


class ValidateManyProblemsTest(TrainioTest):
    def test_many_broken_files_are_counted_and_the_first_hundred_listed(self):
        # Every rank keeps its first 100 problems and counts the rest: a dataset of millions of
        # missing files must not become millions of lines gathered on rank 0.
        data = ["dataset.data_folder=m", "dataset.num_files_train=150", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.num_subfolders_train=0", "dataset.record_length_bytes=512",
                "dataset.format=npy"]
        self.ok("generate", "default", *data)
        names = sorted(os.listdir(self.path("m/train")))
        for name in names[:130]:
            os.remove(self.path(f"m/train/{name}"))
        r = self.run_trainio("validate", "default", *data, ranks=2)
        self.assertEqual(r.code, 1, r)
        lines = r.out.strip().splitlines()
        listed = [l for l in lines if l.endswith(": missing")]
        self.assertEqual(len(listed), 100, r.out)
        self.assertEqual(listed, sorted(listed))
        self.assertEqual(listed[0], f"m/train/{names[0]}: missing")  # the first, in sorted order
        self.assertIn("and 30 more problems", r.out)
        self.assertTrue(lines[-1].startswith("checked 150 files"), r.out)
        self.assertIn("130 problems", lines[-1])


class ValidateMissingDatasetTest(TrainioTest):
    def test_a_missing_or_empty_folder_is_one_clear_error_not_a_line_per_file(self):
        os.makedirs(self.path("empty"))
        for folder in ("nowhere", "empty"):
            for ranks in (None, 2):
                r = self.run_trainio("validate", "default", f"dataset.data_folder={folder}", ranks=ranks)
                self.assertEqual(r.code, 1, r)
                self.assertNotIn(": missing", r.out + r.err)
                self.assertEqual((r.out + r.err).count("there is no dataset in"), 1, r)
                self.assertIn("fix: ", r.err)
                self.assertIn("trainio generate", r.err)
