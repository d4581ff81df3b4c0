"""trainio runs on an S3 dataset (storage_type: s3), against the S3 server tests/integration/s3.sh
starts (TRAINIO_S3_ENDPOINT, bucket TRAINIO_S3_BUCKET, TRAINIO_S3_ACCESS_KEY and _SECRET_KEY;
TRAINIO_S3_MODELS says what the server checks). What trainio generated is read back with boto3 and
parsed with numpy, as DLIO's NPZReaderS3 and NPYReaderS3 parse it (np.load of the bytes)."""
import glob
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import unittest
import urllib.request
import uuid

import boto3
import numpy as np
from botocore.config import Config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import MPI_ENV, TRAINIO, TrainioTest  # noqa: E402

ENDPOINT = os.environ["TRAINIO_S3_ENDPOINT"]
BUCKET = os.environ["TRAINIO_S3_BUCKET"]
ACCESS_KEY = os.environ["TRAINIO_S3_ACCESS_KEY"]
SECRET = os.environ["TRAINIO_S3_SECRET_KEY"]  # never-shown-...: the tests look for it in what trainio leaves
MODELS = set(os.environ.get("TRAINIO_S3_MODELS", "").split(","))
S3RVER = os.environ.get("TRAINIO_S3RVER")  # s3rver's program, for tests that need a server of their own


def s3_args(prefix, secret=SECRET, access_key=ACCESS_KEY, endpoint=ENDPOINT):
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
        _client = boto3.client("s3", endpoint_url=ENDPOINT, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET,
                               region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))
    return _client


def put_or_delete(key, body):
    """Replaces the object `key` with `body`, or deletes it when `body` is None (a damaged or a
    missing object, for the runs that must fail naming it)."""
    if body is None:
        client().delete_object(Bucket=BUCKET, Key=key)
    else:
        client().put_object(Bucket=BUCKET, Key=key, Body=body)


_client = None


def control(method, what, body=None):
    """A control request to the strict test server (tests/integration/strict_s3.py)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(os.environ["TRAINIO_S3_CONTROL"] + "/" + what, data=data, method=method)
    with urllib.request.urlopen(request) as answer:
        return json.loads(answer.read())


def open_uploads(prefix):
    return [u for u in control("GET", "uploads") if u["key"].startswith(prefix + "/")]


class StrictServerTest(TrainioTest):
    """Tests that need the strict server's faults: skipped against the other servers."""

    def setUp(self):
        if "faults" not in MODELS:
            self.skipTest("the server injects no faults (the strict test server does)")
        super().setUp()
        control("DELETE", "faults")
        self.addCleanup(control, "DELETE", "faults")

    def prefix(self):
        return f"{self.id().split('.')[-1][:40]}-{uuid.uuid4().hex[:8]}"


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
            ("wrong secret", s3_args(self.prefix(), secret="wrong-secret"), "403", "secret_access_key"),
            ("missing bucket", [a.replace(f"s3://{BUCKET}/", "s3://no-such-bucket/") for a in s3_args(self.prefix())],
             "404", "create the bucket 'no-such-bucket'"),
            ("server down", s3_args(self.prefix(), endpoint="http://127.0.0.1:9") + ["storage.storage_options.s3_max_attempts=2"],
             "no answer", "endpoint_url"),
        ]
        needs = {"wrong access key": "access_keys", "wrong secret": "signatures"}
        for name, args, what, fix in cases:
            with self.subTest(name):
                if needs.get(name, "") and needs[name] not in MODELS:
                    continue  # the server does not check it
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

    def test_a_checkpoint_only_run_needs_no_data_folder(self):
        # The shipped llama3_8b_s3, scaled down: no dataset section, so data_folder is DLIO's local
        # default; nothing is read from it and no folder is made for it.
        prefix = self.prefix()
        env = {"AWS_ENDPOINT_URL": ENDPOINT, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET}
        small = ["model.num_layers=2", "model.transformer.vocab_size=1000", "model.transformer.hidden_size=256",
                 "model.transformer.ffn_hidden_size=512", "model.transformer.num_attention_heads=4",
                 "model.transformer.num_kv_heads=2", "checkpoint.num_checkpoints_write=1",
                 "checkpoint.num_checkpoints_read=1", "checkpoint.time_between_checkpoints=0"]
        r = self.ok("run", "llama3_8b_s3", f"checkpoint.checkpoint_folder=s3://{BUCKET}/{prefix}/ck", *small,
                    "--output", "out", env=env)
        self.assertFalse(os.path.exists(self.path("data")), os.listdir(self.dir))
        save, load = self.summary("out")["trainio"]["checkpoint"]["checkpoints"]
        self.assertGreater(save["requests"]["by_kind"]["CompleteMultipartUpload"], 0)
        self.assertGreater(load["requests"]["by_kind"]["GET"], 0)
        self.assertIn(f"S3 {save['requests']['count']} requests (", r.out + r.err)
        keys = [o["Key"] for o in client().list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/ck/")["Contents"]]
        self.assertEqual(len(keys), save["files"])

    def test_the_shipped_s3_workload_generates_trains_and_checkpoints_on_s3(self):
        prefix = self.prefix()
        env = {"AWS_ENDPOINT_URL": ENDPOINT, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET}
        config = self.ok("config", "unet3d_h100_s3").out
        self.assertIn("storage_type: s3", config)
        self.assertIn("checkpoint_folder: s3://unet3d/checkpoints", config)
        self.ok("run", "unet3d_h100_s3", f"dataset.data_folder=s3://{BUCKET}/{prefix}/data",
                f"checkpoint.checkpoint_folder=s3://{BUCKET}/{prefix}/ck", "workflow.generate_data=True",
                "dataset.num_files_train=4", "dataset.record_length_bytes=1000000", "dataset.record_length_bytes_stdev=0",
                "dataset.record_length_bytes_resize=0", "reader.batch_size=2", "reader.read_threads=1", "train.epochs=1",
                "train.computation_time=0", "checkpoint.checkpoint_after_epoch=1", "model.model_size_bytes=4096",
                "--output", "out", env=env)
        s = self.summary("out")["trainio"]
        self.assertEqual(s["generate"]["files_written"], 4)
        self.assertEqual(s["epochs"][0]["train"]["requests"]["by_kind"]["GET"], 4)
        self.assertEqual(s["checkpoint"]["checkpoints"][0]["kind"], "save")
        self.assertGreater(s["checkpoint"]["checkpoints"][0]["requests"]["by_kind"]["CompleteMultipartUpload"], 0)

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
    access_key_id: {ACCESS_KEY}
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
        # Newer DLIO files list several endpoints (rank r uses endpoint r % N).
        self.ok("run", "unet3d_s3.yaml", "storage.storage_options.s3_force_path_style=True",
                f"storage.storage_options.endpoint_url={ENDPOINT}, {ENDPOINT}", "--output", "several")
        empty = self.run_trainio("run", "unet3d_s3.yaml", f"storage.storage_options.endpoint_url={ENDPOINT},,{ENDPOINT}",
                                 "--output", "x")
        self.assertEqual(empty.code, 2, empty)
        self.assertIn("has an empty entry", empty.err)

    def test_an_https_endpoint_is_used_once_its_certificate_is_trusted(self):
        if "TRAINIO_S3_TLS_ENDPOINT" not in os.environ:
            self.skipTest("no https endpoint of this server")
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
                put_or_delete(victim, body)
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
            args = s3_args(self.prefix(), access_key="S3RVER", endpoint=f"http://127.0.0.1:{port}")
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


class S3EndpointsTest(TrainioTest):
    """Two endpoints of one store (the strict server's second port)."""

    def setUp(self):
        if "TRAINIO_S3_ENDPOINT2" not in os.environ:
            self.skipTest("this server has one endpoint")
        super().setUp()

    def prefix(self):
        return f"{self.id().split('.')[-1][:40]}-{uuid.uuid4().hex[:8]}"

    def by_endpoint(self, phase):
        return [e["count"] for e in phase["requests"]["by_endpoint"]]

    def test_ranks_and_requests_spread_over_the_endpoints_and_each_is_reported(self):
        two = f"{ENDPOINT},{os.environ['TRAINIO_S3_ENDPOINT2']}"
        prefix = self.prefix()
        # By rank (the default): rank r uses endpoint r % 2, so two ranks use both.
        r = self.ok("run", "default", *s3_args(prefix, endpoint=two), *SMALL, "workflow.generate_data=True",
                    "--output", "ranks", ranks=2)
        s = self.summary("ranks")
        for phase in (s["trainio"]["generate"], s["trainio"]["epochs"][0]["train"]):
            endpoints = phase["requests"]["by_endpoint"]
            self.assertEqual([e["endpoint"] for e in endpoints], [0, 1])
            self.assertTrue(all(e["count"] > 0 for e in endpoints), endpoints)
            self.assertEqual(sum(e["count"] for e in endpoints), phase["requests"]["count"])
            self.assertEqual(sum(e["bytes"] for e in endpoints), phase["requests"]["bytes"])
            self.assertEqual(sum(e["retries"] for e in endpoints), phase["requests"]["retries"])
            self.assertGreater(endpoints[1]["first_byte_seconds"]["p50"], 0)
        self.assertIn("S3 endpoints", r.err + r.out)
        # trainio verify rebuilds each endpoint's figures from the records: one edited is found.
        import shutil
        shutil.copytree(self.path("ranks"), self.path("edited"))
        self.unverified.add("edited")
        s["trainio"]["epochs"][0]["train"]["requests"]["by_endpoint"][1]["bytes"] += 1
        self.write_json(s, "edited", "summary.json")
        edited = self.run_trainio("verify", self.path("edited"))
        self.assertNotEqual(edited.code, 0, edited)
        self.assertIn("by_endpoint.1.bytes", edited.out)
        # One rank by rank: only its endpoint, the first.
        self.ok("run", "default", *s3_args(prefix, endpoint=two), *SMALL, "--output", "one")
        self.assertEqual(self.by_endpoint(self.summary("one")["trainio"]["epochs"][0]["train"]), [16])
        # One rank by request: its requests alternate over both.
        self.ok("run", "default", *s3_args(prefix, endpoint=two), *SMALL, "storage.storage_options.s3_endpoint_spread=request",
                "--output", "request")
        train = self.by_endpoint(self.summary("request")["trainio"]["epochs"][0]["train"])
        self.assertEqual(len(train), 2)
        self.assertLessEqual(abs(train[0] - train[1]), 1, train)
        if "faults" in MODELS:  # the server says which port took each request
            ports = {x["port"] for x in control("GET", "log") if (x.get("key") or "").startswith(prefix + "/")}
            self.assertEqual(len(ports), 2)


class S3FaultsTest(StrictServerTest):
    def test_a_checkpoint_save_whose_completions_lose_their_answers_succeeds(self):
        # Each CompleteMultipartUpload is done, then its answer lost: the retry finds the upload
        # gone (404 NoSuchUpload), and a HEAD finds the object whole.
        prefix = self.prefix()
        control("POST", "faults", {"op": "CompleteMultipartUpload", "key": f"{prefix}/ck/", "fault": "lose_answer",
                                   "per_key": True})
        self.ok("run", "default", *s3_args(prefix), "workflow.train=False", "workflow.generate_data=False",
                "workflow.checkpoint=True", f"checkpoint.checkpoint_folder=s3://{BUCKET}/{prefix}/ck",
                "model.model_size_bytes=12000000", "checkpoint.num_checkpoints_write=1",
                "checkpoint.num_checkpoints_read=1", "--output", "out", ranks=2)
        save, load = self.summary("out")["trainio"]["checkpoint"]["checkpoints"]
        files = save["files"]
        self.assertGreater(files, 0)
        self.assertEqual(control("GET", "faults")[0]["applied"], files)
        self.assertEqual(save["requests"]["by_kind"]["CompleteMultipartUpload"], files)
        self.assertEqual(save["requests"]["by_status"]["404"], files)  # each completion's retry
        self.assertGreaterEqual(save["requests"]["retries"], files)
        self.assertEqual(load["requests"]["by_kind"]["HEAD"], files)
        self.assertEqual(open_uploads(prefix), [])

    def test_generation_and_reads_ride_out_lost_answers_resets_and_slowdowns(self):
        prefix = self.prefix()
        once = {"key": f"{prefix}/", "per_key": True}
        control("POST", "faults", [dict(once, op="CreateMultipartUpload", fault="lose_answer"),
                                   dict(once, op="UploadPart", fault="slow_down", retry_after=0),
                                   dict(once, op="CompleteMultipartUpload", fault="internal_error"),
                                   dict(once, op="PutObject", fault="lose_answer"),
                                   dict(once, op="GetObject", fault="reset")])
        run = self.ok("run", "default", *s3_args(prefix), *SMALL, "workflow.generate_data=True", "--output", "out")
        applied = {r["op"]: r["applied"] for r in control("GET", "faults")}
        self.assertEqual(applied["CreateMultipartUpload"], 10)
        self.assertEqual(applied["UploadPart"], 10)
        self.assertEqual(applied["CompleteMultipartUpload"], 10)
        self.assertGreaterEqual(applied["GetObject"], 8)
        self.assertEqual(open_uploads(prefix), [])  # no upload a lost Create began is left
        keys = sorted(o["Key"] for o in client().list_objects_v2(Bucket=BUCKET, Prefix=prefix + "/")["Contents"])
        for key in (k for k in keys if k.endswith(".npz")):
            x = np.load(io.BytesIO(client().get_object(Bucket=BUCKET, Key=key)["Body"].read()))["x"]
            self.assertEqual(x.nbytes, 2 * (int(3000000 ** 0.5) ** 2))
        s = self.summary("out")
        gen = s["trainio"]["generate"]["requests"]
        self.assertGreaterEqual(gen["retries"], 30)
        self.assertEqual(gen["by_kind"]["CreateMultipartUpload"], 10)
        first = s["trainio"]["epochs"][0]["train"]["requests"]
        self.assertGreaterEqual(first["retries"], 1)
        self.assertEqual(set(first["by_status"]), {"206"})
        # What the retried tries got: each fault's answer, and nothing else.
        self.assertEqual(gen["retries_by_status"]["503"], 10)
        self.assertEqual(gen["retries_by_status"]["500"], 10)
        self.assertGreaterEqual(gen["retries_by_status"]["no_answer"], 10)
        self.assertEqual(sum(gen["retries_by_status"].values()), gen["retries"])
        self.assertEqual(first["retries_by_status"], {"no_answer": first["retries"]})
        # The console and the HTML report show each phase's S3 figures.
        shown = run.out + run.err
        self.assertIn(f"S3 {gen['count']} requests (", shown)
        self.assertIn(f"{gen['retries']} retries after ", shown)
        self.assertIn("503 x10", shown)
        self.assertIn(f"train: S3 {first['count']} requests (", shown)
        self.assertIn("first byte p50 ", shown)
        self.ok("report", self.path("out"), "--html", "out.html")
        html = self.read_text("out.html")
        self.assertIn("<th>S3 requests</th>", html)
        self.assertIn(f"<tr><td>generation</td><td>{gen['count']}</td>", html)
        self.assertIn(f"<tr><td>epoch 1 train</td><td>{first['count']}</td>", html)
        self.assertIn("503 &times;10", html)
        # Counts print whole, however large (not 1.23457e+06).
        import shutil
        shutil.copytree(self.path("out"), self.path("big"))
        self.unverified.add("big")
        s["trainio"]["generate"]["requests"]["count"] = 1234567
        self.write_json(s, "big", "summary.json")
        self.ok("report", self.path("big"), "--html", "big.html")
        self.assertIn("<tr><td>generation</td><td>1234567</td>", self.read_text("big.html"))

    def test_a_checkpoint_s3_cannot_hold_is_refused_before_any_request(self):
        # 6 TB in one object: over S3's 5 TiB. (The fault stops a client that would try anyway.)
        prefix = self.prefix()
        control("POST", "faults", {"op": "UploadPart", "key": f"{prefix}/", "fault": "internal_error", "times": -1})
        control("DELETE", "log")
        r = self.run_trainio("run", "default", *s3_args(prefix), "workflow.train=False", "workflow.generate_data=False",
                             "workflow.checkpoint=True", f"checkpoint.checkpoint_folder=s3://{BUCKET}/{prefix}/ck",
                             "model.model_size_bytes=6000000000000", "checkpoint.num_checkpoints_write=1",
                             "checkpoint.num_checkpoints_read=0", "--output", "out", timeout=120)
        self.assertEqual(r.code, 2, r)
        self.assertIn("5 TiB", r.err)
        self.assertIn("fix: ", r.err)
        self.assertEqual([x for x in control("GET", "log") if (x.get("key") or "").startswith(prefix)], [])


if __name__ == "__main__":
    unittest.main()
