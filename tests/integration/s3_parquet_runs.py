"""Parquet datasets on S3, against the server tests/integration/s3.sh starts: objects byte for byte
the files trainio writes for the same workload; reads as the MLCommons DLIO fork's
ParquetReaderS3Iterable makes them (HEAD, a ranged GET of the footer, one ranged GET per row group),
checked against the strict server's request log; the projection in the bytes moved; a damaged
object named."""
import os
import re
import struct
import sys
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import TrainioTest  # noqa: E402
from s3_runs import BUCKET, MODELS, client, control, put_or_delete, s3_args  # noqa: E402

COLUMNS = 20
ROWS, ROW_GROUP, FILES = 200, 50, 4
GROUPS = ROWS // ROW_GROUP
FOOTER_READ = 64 * 1024  # Arrow's kDefaultFooterReadSize


def workload(columns=None, extra=()):
    """20 float32 columns of 16 values (equal chunks), 4 row groups per file, one reader thread."""
    spec = "[" + ", ".join(f"{{name: c{i}, dtype: float32, size: 16}}" for i in range(COLUMNS)) + "]"
    args = ["dataset.format=parquet", f"dataset.num_files_train={FILES}", "dataset.num_files_eval=0",
            f"dataset.num_samples_per_file={ROWS}", f"dataset.parquet.row_group_size={ROW_GROUP}",
            f"dataset.parquet.columns={spec}", "dataset.num_subfolders_train=0", "dataset.num_subfolders_eval=0",
            "workflow.evaluation=False", "reader.batch_size=10", "reader.read_threads=1",
            "reader.sample_shuffle=off", "reader.file_shuffle=off", "train.epochs=2",
            "train.computation_time=0"]
    if columns is not None:
        args.append("storage.storage_options.columns=[" + ", ".join(f"c{i}" for i in columns) + "]")
    return args + list(extra)


def data_area(body):
    """The bytes of a Parquet object's column chunks: between the leading PAR1 and the footer."""
    (length,) = struct.unpack("<I", body[-8:-4])
    return len(body) - 8 - length - 4


def span(text):
    first, last = map(int, re.fullmatch(r"bytes=(\d+)-(\d+)", text).groups())
    return first, last - first + 1


class S3ParquetTest(TrainioTest):
    def prefix(self):
        return f"pq-{self.id().split('.')[-1][:40]}-{uuid.uuid4().hex[:8]}"

    def keys(self, prefix):
        listed = client().list_objects_v2(Bucket=BUCKET, Prefix=prefix + "/train/")
        return sorted(o["Key"] for o in listed.get("Contents", []))

    def test_objects_are_the_files_bytes_and_a_run_reads_them_as_the_fork_does(self):
        prefix = self.prefix()
        self.ok("generate", "default", *workload(), f"dataset.data_folder={self.path('local')}")
        if "faults" in MODELS:
            control("DELETE", "log")
        self.ok("run", "default", *s3_args(prefix), *workload(columns=range(5)), "workflow.generate_data=True",
                "--output", "out")
        # The requests the run made (before this test's own GETs).
        log = [r for r in control("GET", "log") if (r.get("key") or "").startswith(prefix + "/train/")] \
            if "faults" in MODELS else []
        keys = self.keys(prefix)
        self.assertEqual(len(keys), FILES)
        bodies = {}
        for key in keys:
            body = client().get_object(Bucket=BUCKET, Key=key)["Body"].read()
            with open(self.path("local", "train", os.path.basename(key)), "rb") as f:
                self.assertEqual(body, f.read(), key)  # the same bytes as the file trainio writes
            bodies[key] = body
        sizes = [len(b) for b in bodies.values()]
        self.assertGreater(min(sizes), FOOTER_READ)  # the footer read is a 64 KiB range, not the object

        s = self.summary("out")
        gen = s["trainio"]["generate"]
        self.assertEqual(gen["files_written"], FILES)
        self.assertEqual(gen["requests"]["by_kind"]["CompleteMultipartUpload"], FILES)
        # Per epoch and object: a HEAD, the footer's GET, one GET per row group (the footer is
        # under 64 KiB, so no second footer GET).
        chunks = sum(data_area(b) for b in bodies.values()) * 5 // COLUMNS
        for e in s["trainio"]["epochs"]:
            train = e["train"]
            self.assertEqual(train["requests"]["by_kind"], {"HEAD": FILES, "GET": FILES * (1 + GROUPS)})
            self.assertEqual(train["requests"]["retries"], 0)
            # Bytes moved: 64 KiB of footer per object, and 5 of the 20 equal column chunks of each row group.
            self.assertEqual(train["bytes_read"], FILES * FOOTER_READ + chunks)
            self.assertIsNone(train["storage_read_bytes"])

        if "faults" not in MODELS:
            return  # the request log is the strict server's
        reads = [r for r in log if r["op"] in ("HeadObject", "GetObject")]
        self.assertTrue(all(r["status"] in (200, 206) for r in reads), reads[:5])
        for key, body in bodies.items():
            mine = [r for r in reads if r["key"] == key]
            self.assertEqual(len(mine), 2 * (2 + GROUPS), key)  # two epochs
            size, area = len(body), data_area(body)
            chunk = area // COLUMNS // GROUPS
            for epoch in (mine[: 2 + GROUPS], mine[2 + GROUPS:]):
                self.assertEqual(epoch[0]["op"], "HeadObject")
                self.assertIsNone(epoch[0]["range"])
                self.assertEqual(span(epoch[1]["range"]), (size - FOOTER_READ, FOOTER_READ))
                # Row group g: the span of its first five chunks, which are the first of its twenty.
                groups = [span(r["range"]) for r in epoch[2:]]
                self.assertEqual(groups, [(4 + g * COLUMNS * chunk, 5 * chunk) for g in range(GROUPS)])

    def test_mlperfs_dlrm_and_flux_run_scaled_down_on_s3(self):
        """dlrm_b200 and flux_b200 as shipped, made small: generated into the bucket byte for byte
        as on files, then trained on. DLRM's row groups keep their 6,144 rows, so that with
        pre_buffer its 40 projected columns of 200 (172 of 896 bytes a row) move about that share:
        the holes between them are over Arrow's 8 KiB."""
        dlrm_rows, flux_rows = 12288, 4
        # One reader thread: each thread reads the row groups its samples need, as each of the fork's
        # workers does, so with more threads a row group's chunks move once per thread.
        for name, extra in (("dlrm_b200", [f"dataset.num_samples_per_file={dlrm_rows}", "reader.batch_size=4096",
                                           "dataset.parquet.pre_buffer=true", "reader.read_threads=1"]),
                            ("flux_b200", [f"dataset.num_samples_per_file={flux_rows}", "reader.batch_size=2",
                                           "reader.read_threads=2"])):
            with self.subTest(name):
                prefix = self.prefix()
                common = [*extra, "dataset.num_files_train=2", "dataset.num_files_eval=0",
                          "workflow.evaluation=False", "train.epochs=1", "train.computation_time=0"]
                self.ok("generate", name, *common, f"dataset.data_folder={self.path(name)}")
                out = f"out-{name}"
                self.ok("run", name, *s3_args(prefix), *common, "workflow.generate_data=True", "--output", out)
                keys = self.keys(prefix)
                self.assertEqual(len(keys), 2)
                stored = 0
                for key in keys:
                    body = client().get_object(Bucket=BUCKET, Key=key)["Body"].read()
                    with open(self.path(name, "train", os.path.basename(key)), "rb") as f:
                        self.assertEqual(body, f.read(), key)
                    stored += data_area(body)
                s = self.summary(out)
                self.assertEqual(s["trainio"]["generate"]["files_written"], 2)
                train = s["trainio"]["epochs"][0]["train"]
                rows, batch = (dlrm_rows, 4096) if name == "dlrm_b200" else (flux_rows, 2)
                self.assertEqual(train["samples"], 2 * rows // batch * batch)
                self.assertEqual(train["requests"]["retries"], 0)
                if name == "dlrm_b200":
                    chunks = train["bytes_read"] - 2 * FOOTER_READ
                    self.assertGreater(chunks / stored, 172 / 896, (chunks, stored))
                    self.assertLess(chunks / stored, 1.05 * 172 / 896, (chunks, stored))

    def test_projection_pre_buffer_and_the_forks_span_move_what_they_should(self):
        # Five columns spread over twenty: the fork's span read moves from the first to the last
        # (nearly the whole row group); pyarrow's pre_buffer (trainio's key) only their chunks.
        prefix = self.prefix()
        picked = [0, 5, 10, 15, 19]
        self.ok("generate", "default", *s3_args(prefix), *workload())
        bodies = [client().get_object(Bucket=BUCKET, Key=k)["Body"].read() for k in self.keys(prefix)]
        area = sum(data_area(b) for b in bodies)
        for pre_buffer, moved, gets in [("False", area, GROUPS), ("True", area * 5 // COLUMNS, GROUPS * 5)]:
            with self.subTest(pre_buffer=pre_buffer):
                out = f"out-{pre_buffer}"
                self.ok("run", "default", *s3_args(prefix), *workload(columns=picked),
                        f"dataset.parquet.pre_buffer={pre_buffer}", "train.epochs=1", "--output", out)
                train = self.summary(out)["trainio"]["epochs"][0]["train"]
                self.assertEqual(train["requests"]["by_kind"], {"HEAD": FILES, "GET": FILES * (1 + gets)})
                self.assertEqual(train["bytes_read"], FILES * FOOTER_READ + moved)

    def test_a_footer_longer_than_64_KiB_costs_a_second_GET_of_all_the_metadata(self):
        if "faults" not in MODELS:
            self.skipTest("the request log is the strict test server's")
        # 60 columns x 200 row groups of one row: some 700 KB of footer.
        prefix = self.prefix()
        spec = "[" + ", ".join(f"{{name: c{i}, dtype: int8}}" for i in range(60)) + "]"
        args = [*s3_args(prefix), "dataset.format=parquet", "dataset.num_files_train=1", "dataset.num_files_eval=0",
                "dataset.num_samples_per_file=200", "dataset.parquet.row_group_size=1", f"dataset.parquet.columns={spec}",
                "storage.storage_options.columns=[c7]", "workflow.evaluation=False", "reader.batch_size=1",
                "reader.read_threads=1", "reader.sample_shuffle=off", "reader.file_shuffle=off", "train.epochs=1",
                "train.computation_time=0"]
        self.ok("generate", "default", *args)
        control("DELETE", "log")
        self.ok("run", "default", *args, "workflow.generate_data=False", "--output", "out")
        (key,) = self.keys(prefix)
        log = [r for r in control("GET", "log") if r.get("key") == key]
        body = client().get_object(Bucket=BUCKET, Key=key)["Body"].read()
        (length,) = struct.unpack("<I", body[-8:-4])
        self.assertGreater(length, FOOTER_READ)
        self.assertEqual([r["op"] for r in log[:3]], ["HeadObject", "GetObject", "GetObject"])
        self.assertEqual(span(log[1]["range"]), (len(body) - FOOTER_READ, FOOTER_READ))
        self.assertEqual(span(log[2]["range"]), (len(body) - 8 - length, length))  # Arrow: ReadAt(start, metadata_len)
        self.assertEqual(len(log), 3 + 200)  # then each row group's one projected chunk
        train = self.summary("out")["trainio"]["epochs"][0]["train"]
        self.assertEqual(train["requests"]["by_kind"], {"HEAD": 1, "GET": 2 + 200})

    def test_a_damaged_cut_or_deleted_object_fails_the_run_naming_it(self):
        prefix = self.prefix()
        self.ok("generate", "default", *s3_args(prefix), *workload())
        victim = self.keys(prefix)[1]
        original = client().get_object(Bucket=BUCKET, Key=victim)["Body"].read()
        (length,) = struct.unpack("<I", original[-8:-4])
        garbage = original[: len(original) - 8 - length] + b"\xff" * length + original[-8:]
        cases = [("cut short", original[: len(original) // 2], "does not end with the Parquet magic"),
                 ("footer damaged", garbage, "damaged footer"),
                 ("deleted", None, "is missing")]
        for name, body, what in cases:
            with self.subTest(name):
                put_or_delete(victim, body)
                r = self.run_trainio("run", "default", *s3_args(prefix), *workload(), "workflow.generate_data=False",
                                     "--output", "x")
                self.assertEqual(r.code, 1, r)
                self.assertIn(f"Parquet object 's3://{BUCKET}/{victim}'", r.err)
                self.assertIn(what, r.err)
                self.assertIn("fix: ", r.err)
                self.assertFalse(os.path.exists(self.path("x", "summary.json")))


if __name__ == "__main__":
    unittest.main()
