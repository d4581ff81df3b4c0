"""What cannot work is refused up front (exit 2, before anything runs or is written): a sweep
point that cannot be planned, S3 URIs and bucket names that are not valid, `validate` of an S3
dataset, a cache folder that resolves into the dataset, a --live-json file whose folder is missing,
a negative time. A results disk that fills during a run names the results folder, once."""
import glob
import os

from harness import TrainioTest

TINY = ["dataset.data_folder=d", "dataset.num_files_train=8", "dataset.num_samples_per_file=1",
        "dataset.record_length_bytes=4096", "dataset.num_files_eval=0", "workflow.evaluation=false",
        "dataset.num_subfolders_train=0", "train.epochs=1", "train.computation_time=0.001"]
S3 = ["storage.storage_type=s3", "storage.storage_options.endpoint_url=http://127.0.0.1:9",
      "storage.storage_options.access_key_id=A", "storage.storage_options.secret_access_key=B",
      "storage.storage_options.s3_max_attempts=1", "framework=pytorch", "reader.data_loader=pytorch",
      "dataset.num_subfolders_eval=0"]


class UpFrontTest(TrainioTest):
    def test_a_sweep_plans_every_point_before_the_first_runs(self):
        self.ok("generate", "default", *TINY)
        r = self.run_trainio("sweep", "default", *TINY, "--vary", "reader.batch_size=1,64,2", "-o", "sw")
        self.assertEqual(r.code, 2, r)
        self.assertIn("reader.batch_size=64", r.err)
        self.assertIn("too few for one step", r.err)
        self.assertIn("fix: ", r.err)
        self.assertEqual(glob.glob(self.path("sw", "ranks=*")), [])  # no point ran
        # Per rank count too: 8 samples give 4 ranks a step of 2, not 16 ranks.
        r = self.run_trainio("sweep", "default", *TINY, "reader.batch_size=2", "--ranks", "1,16", "-o", "sw2")
        self.assertEqual(r.code, 2, r)
        self.assertIn("ranks=16", r.err)
        self.assertEqual(glob.glob(self.path("sw2", "ranks=*")), [])

    def test_s3_uris_and_bucket_names_are_checked_as_config_errors(self):
        cases = [("s3:///x", "has no bucket name"), ("s3://Bucket_Upper/x", "not a valid S3 bucket name"),
                 ("s3://b/x", "not a valid S3 bucket name"), ("s3://my..bucket/x", "not a valid S3 bucket name"),
                 ("s3://192.168.1.1/x", "not a valid S3 bucket name"), ("s3://-bucket/x", "not a valid S3 bucket name")]
        for uri, what in cases:
            with self.subTest(uri=uri):
                r = self.run_trainio("run", "default", *TINY, *S3, f"dataset.data_folder={uri}", "--output", "o",
                                     timeout=60)
                self.assertEqual(r.code, 2, r)
                self.assertIn("dataset.data_folder", r.err)
                self.assertIn(what, r.err)
                self.assertIn("fix: ", r.err)
                self.assertNotIn("create the bucket", r.err)
                self.assertFalse(os.path.exists(self.path("o")))
        r = self.run_trainio("run", "default", *TINY, *S3, "dataset.data_folder=s3://bucket/d", "workflow.train=false",
                             "workflow.checkpoint=true", "checkpoint.checkpoint_folder=s3://UPPER/ck",
                             "checkpoint.num_checkpoints_write=1", "--output", "o", timeout=60)
        self.assertEqual(r.code, 2, r)
        self.assertIn("checkpoint.checkpoint_folder", r.err)

    def test_validate_refuses_an_s3_dataset(self):
        r = self.run_trainio("validate", "default", *TINY, *S3, "dataset.data_folder=s3://bucket/d", timeout=60)
        self.assertEqual(r.code, 2, r)
        self.assertIn("S3", r.err)
        self.assertIn("not supported", r.err)
        self.assertIn("fix: ", r.err)

    def test_a_cache_path_that_resolves_into_the_data_folder_is_refused(self):
        self.ok("generate", "default", *TINY)
        os.symlink("d", self.path("tier-link"))
        os.makedirs(self.path("d", "inside"))
        for path in ("tier-link", "tier-link/inside"):
            with self.subTest(path=path):
                r = self.run_trainio("run", "default", *TINY, "framework=pytorch", "reader.data_loader=pytorch",
                                     "cache.tier=local_ssd", f"cache.path={path}", "cache.capacity=64MiB",
                                     "--output", "o")
                self.assertEqual(r.code, 2, r)
                self.assertIn("cache.path", r.err)
                self.assertIn("overlap", r.err)
                self.assertEqual(glob.glob(self.path("d", "**", "trainio-tier*"), recursive=True), [])
                self.assertFalse(os.path.exists(self.path("o")))

    def test_live_json_into_a_missing_folder_is_refused_before_the_run(self):
        self.ok("generate", "default", *TINY)
        r = self.run_trainio("run", "default", *TINY, "--live-json", "no/such/folder/live.json", "--output", "o")
        self.assertEqual(r.code, 2, r)
        self.assertIn("--live-json", r.err)
        self.assertIn("no/such/folder", r.err)
        self.assertNotIn("generate the dataset", r.err)
        self.assertFalse(os.path.exists(self.path("o")))

    def test_a_negative_time_says_it_must_not_be_negative(self):
        for key in ("train.computation_time", "reader.preprocess_time", "evaluation.eval_time"):
            with self.subTest(key=key):
                r = self.run_trainio("run", "default", *TINY, f"{key}=-1", "--output", "o")
                self.assertEqual(r.code, 2, r)
                self.assertIn(f"{key}: ", r.err)
                self.assertIn("must not be negative", r.err)
                self.assertIn("got '-1'", r.err)

    def test_a_full_results_disk_names_the_results_folder_once(self):
        self.ok("generate", "default", *TINY)
        full = self.tmpfs("full", "size=12k")
        r = self.run_trainio("run", "default", *TINY, "train.epochs=200", "--output", os.path.join(full, "r"))
        self.assertEqual(r.code, 1, r)
        self.assertNotIn("LOG ERROR", r.err)
        self.assertNotIn("data/checkpoint folder", r.err)
        self.assertIn("No space left on device", r.err)
        self.assertIn("results folder", r.err)
        self.assertIn("--output", r.err)
        self.assertLessEqual(r.err.count("dlio.log"), 2, r.err)  # the log's failure said once, not per line
