"""trainio runs on an S3 dataset (storage_type: s3), against the S3 server tests/integration/s3.sh
starts (TRAINIO_S3_ENDPOINT, bucket TRAINIO_S3_BUCKET). What trainio generated is read back with
boto3 and parsed with numpy, as DLIO's NPZReaderS3 and NPYReaderS3 parse it (np.load of the bytes)."""
import glob
import io
import os
import signal
import socket
import subprocess
import sys
import time
import unittest
import uuid

import boto3
import numpy as np
from botocore.config import Config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import MPI_ENV, TRAINIO, TrainioTest  # noqa: E402

ENDPOINT = os.environ["TRAINIO_S3_ENDPOINT"]
BUCKET = os.environ["TRAINIO_S3_BUCKET"]
SECRET = "never-shown-" + uuid.uuid4().hex  # s3rver checks the access key, not the signature
S3RVER = os.environ.get("TRAINIO_S3RVER")  # the server's program, for tests that need one of their own


def s3_args(prefix, secret=SECRET, access_key="S3RVER", endpoint=ENDPOINT):
    return ["storage.storage_type=s3", f"dataset.data_folder=s3://{BUCKET}/{prefix}",
            f"storage.storage_options.endpoint_url={endpoint}", f"storage.storage_options.access_key_id={access_key}",
            f"storage.storage_options.secret_access_key={secret}", "storage.storage_options.s3_force_path_style=True",
            "dataset.num_subfolders_train=0", "dataset.num_subfolders_eval=0"]


SMALL = ["dataset.num_files_train=8", "dataset.num_files_eval=2", "dataset.num_samples_per_file=2",
         "dataset.record_length_bytes=3000000", "train.epochs=2", "train.computation_time=0.001",
         "reader.batch_size=2", "workflow.evaluation=True"]


def client():
    # One client for the module: each request would otherwise leave a socket to the collector.
    global _client
    if _client is None:
        _client = boto3.client("s3", endpoint_url=ENDPOINT, aws_access_key_id="S3RVER", aws_secret_access_key="S3RVER",
                               region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))
    return _client


_client = None


class S3RunTest(TrainioTest):
    def prefix(self):
        return f"{self.id().split('.')[-1]}-{uuid.uuid4().hex[:8]}"

    def test_generated_objects_open_in_numpy_and_a_run_reads_them_through_the_object_store(self):
        for fmt in ("npz", "npy"):
            with self.subTest(fmt=fmt):
                prefix = self.prefix()
                out = f"out-{fmt}"
                self.ok("run", "default", *s3_args(prefix), *SMALL, f"dataset.format={fmt}",
                        "workflow.generate_data=True", "--output", out)
                keys = sorted(o["Key"] for o in client().list_objects_v2(Bucket=BUCKET, Prefix=prefix + "/")["Contents"])
                self.assertIn(f"{prefix}/.trainio-dataset.json", keys)
                data = [k for k in keys if k.endswith("." + fmt)]
                self.assertEqual(len(data), 10)  # 8 train + 2 valid, each one object
                self.assertTrue(all(k.startswith((f"{prefix}/train/", f"{prefix}/valid/")) for k in data))
                body = client().get_object(Bucket=BUCKET, Key=data[0])["Body"].read()
                loaded = np.load(io.BytesIO(body))
                x = loaded["x"] if fmt == "npz" else loaded
                self.assertEqual(x.dtype, np.uint8)
                self.assertEqual(x.nbytes, 2 * (int(3000000 ** 0.5) ** 2))  # two samples of floor(sqrt(n))^2

                s = self.summary(out)
                gen = s["trainio"]["generate"]
                self.assertEqual(gen["files_written"], 10)
                # An object is durable once its upload completed: nothing to sync after the writes.
                self.assertEqual(gen["durable_seconds"], gen["write_seconds"])
                # s3torchconnector's writer: a multipart upload per object, 8 MiB parts.
                self.assertEqual(gen["requests"]["by_kind"]["CreateMultipartUpload"], 10)
                self.assertEqual(gen["requests"]["by_kind"]["CompleteMultipartUpload"], 10)
                epoch = s["trainio"]["epochs"][0]["train"]
                # DLIO's on-demand reads: each sample fetches its whole object, one 8 MiB ranged GET here.
                self.assertEqual(epoch["requests"]["by_kind"], {"GET": epoch["samples"]})
                self.assertEqual(set(epoch["requests"]["by_status"]), {"206"})
                self.assertEqual(epoch["requests"]["retries"], 0)
                self.assertGreater(epoch["requests"]["first_byte_seconds"]["p50"], 0)
                self.assertLessEqual(epoch["requests"]["first_byte_seconds"]["p50"], epoch["requests"]["total_seconds"]["p50"])
                self.assertEqual(epoch["bytes_read"], epoch["samples"] * len(body))
                # The kernel's block counters say nothing of an object store: unknown, not 0.
                self.assertIsNone(epoch["storage_read_bytes"])
                self.assertIsNone(epoch["device_read_bytes"])
                self.assertEqual(epoch["page_cache"]["verdict"], "bypassed")
                self.assertEqual(epoch["page_cache"]["method"], "object_store")

    def test_a_second_generation_keeps_the_objects_and_a_changed_workload_writes_them_again(self):
        prefix = self.prefix()
        first = self.ok("run", "default", *s3_args(prefix), *SMALL, "workflow.generate_data=True",
                        "workflow.train=False", "--output", "a")
        self.assertIn("10 files written, 0 kept", first.err)
        again = self.ok("run", "default", *s3_args(prefix), *SMALL, "workflow.generate_data=True",
                        "workflow.train=False", "--output", "b")
        self.assertIn("0 files written, 10 kept", again.err)
        changed = self.run_trainio("run", "default", *s3_args(prefix), *SMALL, "dataset.record_length_bytes=2000000",
                                   "workflow.generate_data=False", "--output", "c")
        self.assertEqual(changed.code, 2, changed)  # a run without generation refuses the other dataset
        self.assertIn("record_length_bytes", changed.err)
        rewritten = self.ok("run", "default", *s3_args(prefix), *SMALL, "dataset.record_length_bytes=2000000",
                            "workflow.generate_data=True", "workflow.train=False", "--output", "d")
        self.assertIn("10 files written, 0 kept", rewritten.err)

    def test_two_ranks_share_the_objects_and_keep_files_false_removes_them(self):
        prefix = self.prefix()
        self.ok("run", "default", *s3_args(prefix), *SMALL, "workflow.generate_data=True", "dataset.keep_files=False",
                "--output", "out", ranks=2)
        s = self.summary("out")
        self.assertEqual(s["num_accelerators"], 2)
        self.assertEqual(s["trainio"]["generate"]["files_written"], 10)
        self.assertNotIn("Contents", client().list_objects_v2(Bucket=BUCKET, Prefix=prefix + "/"))

    def test_the_secret_key_is_never_printed_nor_written(self):
        prefix = self.prefix()
        r = self.ok("run", "default", *s3_args(prefix), *SMALL, "workflow.generate_data=True",
                    "workflow.profiling=True", "--log-level", "debug", "--output", "out")
        self.assertNotIn(SECRET, r.out + r.err)
        for path in glob.glob(self.path("**"), recursive=True):
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    self.assertNotIn(SECRET.encode(), f.read(), path)
        self.assertEqual(self.summary("out")["trainio"]["workload"]["config"]["storage"]["storage_options"]
                         ["secret_access_key"], "***")

    def test_wrong_credentials_a_missing_bucket_and_a_server_that_is_down_are_one_clear_error(self):
        cases = [
            ("wrong access key", s3_args(self.prefix(), access_key="WRONG"), "403", "access_key_id"),
            ("missing bucket", [a.replace(f"s3://{BUCKET}/", "s3://no-such-bucket/") for a in s3_args(self.prefix())],
             "404", "create the bucket 'no-such-bucket'"),
            ("server down", s3_args(self.prefix(), endpoint="http://127.0.0.1:9") + ["storage.storage_options.s3_max_attempts=2"],
             "no answer", "endpoint_url"),
        ]
        for name, args, what, fix in cases:
            with self.subTest(name):
                start = time.monotonic()
                r = self.run_trainio("run", "default", *args, *SMALL, "workflow.generate_data=True", "--output", "x",
                                     timeout=60)
                self.assertEqual(r.code, 1, r)
                self.assertIn(what, r.err)
                self.assertIn("fix: ", r.err)
                self.assertIn(fix, r.err)
                self.assertNotIn("Traceback", r.err)
                self.assertLess(time.monotonic() - start, 30)
                self.assertFalse(os.path.exists(self.path("x", "summary.json")))

    def test_checkpoints_to_s3_are_multipart_uploads_that_torch_loads(self):
        prefix = self.prefix()
        self.ok("run", "default", *s3_args(prefix), "workflow.train=False", "workflow.generate_data=False",
                "workflow.checkpoint=True", f"checkpoint.checkpoint_folder=s3://{BUCKET}/{prefix}/ck",
                "model.model_size_bytes=20000000", "checkpoint.num_checkpoints_write=1",
                "checkpoint.num_checkpoints_read=1", "--output", "out", ranks=2)
        keys = sorted(o["Key"] for o in client().list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/ck/")["Contents"])
        self.assertTrue(keys)
        self.assertTrue(all(k.startswith(f"{prefix}/ck/global_epoch1_step1/") and k.endswith(".pt") for k in keys), keys)
        with open(self.path("model_states-0.pt"), "wb") as f:
            f.write(client().get_object(Bucket=BUCKET, Key=keys[0])["Body"].read())
        import subprocess
        loaded = subprocess.run(["/usr/bin/python3", "-c", "import torch, sys; s = torch.load(sys.argv[1]); "
                                 "print(sum(t.numel() * t.element_size() for t in s.values() if hasattr(t, 'numel')))",
                                 self.path("model_states-0.pt")], capture_output=True, text=True)
        self.assertEqual(loaded.returncode, 0, loaded.stderr)
        s = self.summary("out")
        save, load = s["trainio"]["checkpoint"]["checkpoints"]
        self.assertEqual(save["files"], len(keys))
        self.assertEqual(save["requests"]["by_kind"]["CreateMultipartUpload"], len(keys))  # one upload per file
        self.assertEqual(save["requests"]["by_kind"]["CompleteMultipartUpload"], len(keys))
        self.assertEqual(load["requests"]["by_kind"]["HEAD"], len(keys))  # torch.load seeks to the end first
        self.assertGreaterEqual(load["requests"]["by_kind"]["GET"], len(keys))
        self.assertEqual(load["page_cache"]["method"], "object_store")
        self.assertIsNone(load["storage_read_bytes"])
        self.assertIsNotNone(s["metric"]["save_checkpoint_io_mean_GB_per_second"])

    def test_a_dlio_s3_workload_file_loads_unchanged(self):
        # The storage section as DLIO's unet3d_*_s3.yaml write it: a YAML boolean for
        # s3_force_path_style (DLIO itself would call .strip() on it), the bucket in storage_root too.
        prefix = self.prefix()
        with open(self.path("unet3d_s3.yaml"), "w") as f:
            f.write(f"""model:
  name: unet3d
  type: cnn
framework: pytorch
workflow:
  generate_data: True
  train: True
  checkpoint: False
dataset:
  data_folder: s3://{BUCKET}/{prefix}
  format: npz
  num_files_train: 8
  num_samples_per_file: 1
  record_length_bytes: 2000000
  record_length_bytes_stdev: 0
storage:
  storage_type: s3
  storage_root: {BUCKET}
  storage_options:
    access_key_id: S3RVER
    secret_access_key: {SECRET}
    endpoint_url: {ENDPOINT}
    region: us-east-1
    s3_force_path_style: False
    s3_max_attempts: 5
reader:
  data_loader: pytorch
  batch_size: 2
  read_threads: 2
train:
  epochs: 1
  computation_time: 0.001
""")
        r = self.ok("config", "unet3d_s3.yaml")
        self.assertIn("s3_force_path_style: false", r.out)
        self.assertNotIn(SECRET, r.out)
        # Buckets as host names (bucket.127.0.0.1) do not resolve here: path style for the run.
        self.ok("run", "unet3d_s3.yaml", "storage.storage_options.s3_force_path_style=True", "--output", "out")
        self.assertEqual(self.summary("out")["trainio"]["epochs"][0]["train"]["requests"]["by_kind"]["GET"], 8)
        several = self.run_trainio("run", "unet3d_s3.yaml",
                                   f"storage.storage_options.endpoint_url={ENDPOINT},{ENDPOINT}", "--output", "x")
        self.assertEqual(several.code, 2, several)
        self.assertIn("lists several endpoints", several.err)

    def test_an_https_endpoint_is_used_once_its_certificate_is_trusted(self):
        args = s3_args(self.prefix(), endpoint=os.environ["TRAINIO_S3_TLS_ENDPOINT"])
        untrusted = self.run_trainio("run", "default", *args, *SMALL, "--output", "x", env={"AWS_CA_BUNDLE": ""})
        self.assertEqual(untrusted.code, 1, untrusted)
        self.assertIn("is not trusted", untrusted.err)
        self.assertIn("AWS_CA_BUNDLE", untrusted.err)
        self.assertLess(untrusted.seconds, 10)  # a certificate is not retried
        self.ok("run", "default", *args, *SMALL, "workflow.generate_data=True", "--output", "out",
                env={"AWS_CA_BUNDLE": os.environ["TRAINIO_S3_TLS_CA"]})
        self.assertEqual(self.summary("out")["trainio"]["generate"]["files_written"], 10)

    def test_an_object_replaced_cut_or_deleted_after_generation_fails_the_run_naming_it(self):
        prefix = self.prefix()
        self.ok("run", "default", *s3_args(prefix), *SMALL, "workflow.generate_data=True", "workflow.train=False",
                "--output", "gen")
        victim = f"{prefix}/train/img_0_of_8.npz"
        original = client().get_object(Bucket=BUCKET, Key=victim)["Body"].read()
        cases = [("cut short", original[: len(original) // 4], "fewer than its"),
                 ("another format's bytes", b"\x93NUMPY" + original[6:], "does not begin as"),
                 ("deleted", None, "NoSuchKey")]
        for name, body, what in cases:
            with self.subTest(name):
                if body is None:
                    client().delete_object(Bucket=BUCKET, Key=victim)
                else:
                    client().put_object(Bucket=BUCKET, Key=victim, Body=body)
                r = self.run_trainio("run", "default", *s3_args(prefix), *SMALL, "workflow.generate_data=False",
                                     "--output", "x")
                self.assertEqual(r.code, 1, r)
                self.assertIn(victim, r.err)
                self.assertIn(what, r.err)
                self.assertIn("fix: ", r.err)
                self.assertFalse(os.path.exists(self.path("x", "summary.json")))

    @unittest.skipUnless(S3RVER, "TRAINIO_S3RVER is not set (tests/integration/s3.sh sets it)")
    def test_a_frozen_endpoint_ends_the_run_within_the_stall_timeout(self):
        # A server of the test's own, frozen (SIGSTOP) while a run reads from it: the run ends
        # within --stall-timeout, not after the client's 60 s per attempt.
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()
        os.makedirs(self.path("frozen-s3"))
        server = subprocess.Popen([S3RVER, "-d", self.path("frozen-s3"), "-a", "127.0.0.1", "-p", str(port),
                                   "--configure-bucket", BUCKET, "--silent"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.1)
            args = s3_args(self.prefix(), endpoint=f"http://127.0.0.1:{port}")
            self.ok("run", "default", *args, *SMALL, "workflow.generate_data=True", "workflow.train=False",
                    "--output", "gen")
            run = subprocess.Popen([TRAINIO, "run", "default", *args, *SMALL, "train.epochs=100000",
                                    "storage.storage_options.s3_max_attempts=2", "--stall-timeout", "5",
                                    "--output", "o"], cwd=self.dir, env=dict(os.environ, **MPI_ENV),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(3)  # reading by now
            self.assertIsNone(run.poll(), "the run ended before the server was frozen")
            os.kill(server.pid, signal.SIGSTOP)
            frozen = time.monotonic()
            try:
                _, err = run.communicate(timeout=200)
            except subprocess.TimeoutExpired:
                run.kill()
                _, err = run.communicate()
            seconds = time.monotonic() - frozen
            self.assertEqual(run.returncode, 1, err)
            self.assertLess(seconds, 20, err)  # 5 s and the watchdog's look, not 2 attempts x 60 s
            self.assertRegex(err, rf"S3 (GET|HEAD) of 's3://{BUCKET}/[^']+' has not returned for [5-7] s")
            self.assertIn("storage.storage_options.endpoint_url", err)
            self.assertFalse(os.path.exists(self.path("o", "summary.json")))
        finally:
            os.kill(server.pid, signal.SIGCONT)
            server.kill()
            server.wait()

    def test_missing_credentials_and_dlio_s3_rules_are_config_errors(self):
        no_key = [a for a in s3_args(self.prefix()) if "access_key_id" not in a]
        env = {k: "" for k in ("AWS_ACCESS_KEY_ID",)}
        r = self.run_trainio("run", "default", *no_key, *SMALL, "--output", "x", env=env)
        self.assertEqual(r.code, 2, r)
        self.assertIn("AWS_ACCESS_KEY_ID", r.err)
        r = self.run_trainio("run", "default", *s3_args(self.prefix()), *SMALL, "dataset.format=tfrecord",
                             "framework=tensorflow", "reader.data_loader=tensorflow", "--output", "x")
        self.assertEqual(r.code, 2, r)
        self.assertIn("DLIO reads only npz and npy", r.err)
        for override, what in [("storage.storage_options.endpoint_url=127.0.0.1:9000", "has no scheme"),
                               ("storage.storage_type=local_fs", "storage.storage_type is not s3"),
                               ("checkpoint.odirect=True", "checkpoint.odirect writes files")]:
            with self.subTest(override):
                args = s3_args(self.prefix()) + ["workflow.checkpoint=True", f"checkpoint.checkpoint_folder=s3://{BUCKET}/ck"]
                if override.startswith("storage.storage_type"):
                    args = [a for a in args if not a.startswith(("storage.storage_type", "dataset.data_folder"))]
                r = self.run_trainio("run", "default", *args, *SMALL, override, "--output", "x")
                self.assertEqual(r.code, 2, r)
                self.assertIn(what, r.err)


if __name__ == "__main__":
    unittest.main()
