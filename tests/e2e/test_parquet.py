"""Parquet end to end: generated files read back by independent readers (hyparquet, and DuckDB
when its npm package installs) with every value checked; validate; runs whose measured bytes show
the column projection. The npm packages install into a cache folder under the build folder; the
reader checks skip, saying why, where npm cannot reach its registry."""
import json
import os
import shutil
import subprocess
import unittest

from harness import TMP_ROOT, TrainioTest

NPM_PACKAGES = ["hyparquet@1.33.0", "@duckdb/node-api@1.5.6-r.1"]
NPM_CACHE = os.path.join(os.path.dirname(os.path.abspath(TMP_ROOT)), "npm-cache", "parquet-readers")
READ_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "parquet_read.mjs")

COLUMNS = ("[{name: label, dtype: float32}, {name: dense, dtype: float32, size: 13}, "
           "{name: cat, dtype: int8, size: 3}, {name: u16, dtype: uint16, size: 2}, "
           "{name: id, dtype: uint64, read: false}, {name: big, dtype: int64}, {name: wide, dtype: float64, size: 2}, "
           "{name: half, dtype: float16, size: 2}, {name: u8, dtype: uint8}, {name: i32, dtype: int32, size: 4}]")
SIZES = {"label": -1, "dense": 13, "cat": 3, "u16": 2, "id": -1, "big": -1, "wide": 2, "half": 2, "u8": -1, "i32": 4}
RANGES = {"cat": (-128, 127), "u16": (0, 65535), "u8": (0, 255), "id": (0, 2**64 - 1), "big": (-2**63, 2**63 - 1),
          "i32": (-2**31, 2**31 - 1)}
ROWS, ROW_GROUP = 150, 40

# The same files (same names, so the same seeded content) in each encoding.
VARIANTS = {
    "plain": ["dataset.compression=none"],
    "gzip": ["dataset.compression=gzip"],
    "zstd-v2": ["dataset.compression=zstd", "dataset.parquet.data_page_version=2"],
    "v2-nostats": ["dataset.parquet.data_page_version=2", "dataset.parquet.write_statistics=false"],
}


def npm_readers():
    """The node_modules folder holding the readers, installed once; None and why when not possible."""
    modules = os.path.join(NPM_CACHE, "node_modules")
    if os.path.isdir(os.path.join(modules, "hyparquet")):
        return modules, None
    if shutil.which("npm") is None or shutil.which("node") is None:
        return None, "node and npm are not installed"
    os.makedirs(NPM_CACHE, exist_ok=True)
    proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", NPM_CACHE, *NPM_PACKAGES],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not os.path.isdir(os.path.join(modules, "hyparquet")):
        return None, f"npm could not install {' '.join(NPM_PACKAGES)}: {proc.stderr.strip()[-300:]}"
    return modules, None


def number(text):
    return float(text) if any(c in text for c in ".eEn") or text in ("Infinity", "-Infinity") else int(text)


class ParquetTest(TrainioTest):
    def args(self, folder, extra=()):
        return ["dataset.format=parquet", f"dataset.data_folder={folder}", "dataset.num_files_train=2",
                "dataset.num_files_eval=0", "dataset.num_subfolders_train=0", "workflow.evaluation=false",
                f"dataset.num_samples_per_file={ROWS}",
                f"dataset.parquet.row_group_size={ROW_GROUP}", f"dataset.parquet.columns={COLUMNS}",
                "reader.batch_size=10", "train.epochs=1", "train.computation_time=0", *extra]

    def test_independent_readers_read_every_value(self):
        files = {}
        for name, extra in VARIANTS.items():
            self.ok("generate", "default", *self.args(name, extra))
            self.ok("validate", "default", *self.args(name, extra))
            for i in range(2):
                files.setdefault(i, {})[name] = self.path(name, "train", f"img_{i}_of_2.parquet")
        modules, why = npm_readers()
        if modules is None:
            self.skipTest(f"no independent Parquet reader: {why}")
        paths = [p for per_file in files.values() for p in per_file.values()]
        proc = subprocess.run(["node", READ_SCRIPT, modules, *paths], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        read = json.loads(proc.stdout)
        for i, per_file in files.items():
            reference = None
            for variant, path in per_file.items():
                readers = read[path]
                for reader, got in readers.items():
                    label = f"file {i} {variant} read by {reader}"
                    if "error" in got:
                        # Node 20 has no Zstandard decoder for hyparquet: DuckDB reads those files.
                        if reader == "hyparquet" and "ZSTD" in got["error"] and "duckdb" in readers:
                            continue
                        self.fail(f"{label}: {got['error']}")
                    self.assertEqual(got["rows"], ROWS, label)
                    self.assertEqual(sorted(got["columns"]), sorted(SIZES), label)
                    for col, size in SIZES.items():
                        c = got["columns"][col]
                        self.assertEqual(set(c["lengths"]), {size}, f"{label}: {col}")
                        self.assertEqual(len(c["values"]), ROWS * max(size, 1), f"{label}: {col}")
                        if col in RANGES:
                            lo, hi = RANGES[col]
                            values = [int(v) for v in c["values"]]
                            self.assertTrue(all(lo <= v <= hi for v in values), f"{label}: {col} out of range")
                            # seeded random content: the values spread over the type's range
                            self.assertGreater(len(set(values)), min(50, ROWS * max(size, 1)) // 2, f"{label}: {col}")
                    values = {col: c["values"] for col, c in got["columns"].items()}
                    if reference is None:
                        reference = values
                    for col in SIZES:
                        self.assertEqual(values[col], reference[col], f"{label}: {col} differs from the first reading")
                stats = readers["hyparquet"].get("statistics") if "error" not in readers["hyparquet"] else None
                if stats is not None and variant != "v2-nostats":
                    self.check_statistics(stats, reference, f"file {i} {variant}")
            if "duckdb" not in read[per_file["plain"]]:
                print(f"\nnote: DuckDB's npm package is not available; values checked with hyparquet only")

    def test_the_forks_single_data_column(self):
        # Without dataset.parquet.columns the fork writes one column `data`: a list of
        # record_length uint8 per row (here 10 x 10 = 100 elements).
        args = ["dataset.format=parquet", "dataset.data_folder=lg", "dataset.num_files_train=1", "dataset.num_files_eval=0",
                "dataset.num_subfolders_train=0", "dataset.num_samples_per_file=7", "dataset.record_length_bytes=100",
                "dataset.compression=gzip", "workflow.train=false"]
        self.ok("generate", "default", *args)
        self.ok("validate", "default", *args)
        modules, why = npm_readers()
        if modules is None:
            self.skipTest(f"no independent Parquet reader: {why}")
        path = self.path("lg", "train", "img_0_of_1.parquet")
        proc = subprocess.run(["node", READ_SCRIPT, modules, path], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        readers = json.loads(proc.stdout)[path]
        first = None
        for reader, got in readers.items():
            self.assertNotIn("error", got, reader)
            self.assertEqual(got["rows"], 7, reader)
            self.assertEqual(list(got["columns"]), ["data"], reader)
            self.assertEqual(set(got["columns"]["data"]["lengths"]), {100}, reader)
            values = [int(v) for v in got["columns"]["data"]["values"]]
            self.assertTrue(all(0 <= v <= 255 for v in values), reader)
            self.assertGreater(len(set(values)), 200, reader)
            first = first or values
            self.assertEqual(values, first, reader)

    def check_statistics(self, stats, values, label):
        """Each row group's min/max statistics are the min/max of its values (NaN left out)."""
        for col, size in SIZES.items():
            if col == "half":
                self.assertNotIn(col, stats, label)  # no statistics for float16 (FIXED_LEN_BYTE_ARRAY)
                continue
            per_row = max(size, 1)
            self.assertEqual(len(stats[col]), (ROWS + ROW_GROUP - 1) // ROW_GROUP, f"{label}: {col}")
            for g, (lo, hi) in enumerate(stats[col]):
                chunk = [number(v) for v in values[col][g * ROW_GROUP * per_row:(g + 1) * ROW_GROUP * per_row]
                         if v != "NaN"]
                self.assertEqual((number(lo), number(hi)), (min(chunk), max(chunk)), f"{label}: {col} row group {g}")

    def run_bytes(self, out, extra):
        args = ["dataset.format=parquet", "dataset.data_folder=p", "dataset.num_files_train=2", "dataset.num_files_eval=0",
                "dataset.num_subfolders_train=0", "workflow.evaluation=false", "dataset.num_samples_per_file=2000", "dataset.parquet.row_group_size=500",
                "dataset.parquet.columns=[" + ", ".join(f"{{name: c{k}, dtype: float32, size: 8}}" for k in range(20)) + "]",
                "reader.batch_size=50", "reader.read_threads=1", "train.epochs=2", "train.computation_time=0",
                "workflow.generate_data=false", *extra]
        self.ok("run", "default", *args, "--output", out)
        s = self.summary(out)
        files = s["trainio"]["characterization"]["data_files"]
        size = os.path.getsize(self.path("p", "train", "img_0_of_2.parquet"))
        footer = 2 * 2 * min(size, 65536)  # epochs x files x pyarrow's footer read
        return files["bytes_read"] - footer, files["reads"], size

    def test_projection_moves_only_the_projected_chunks(self):
        self.ok("generate", "default", "dataset.format=parquet", "dataset.data_folder=p", "dataset.num_files_train=2",
                "dataset.num_files_eval=0", "dataset.num_subfolders_train=0", "dataset.num_samples_per_file=2000",
                "dataset.parquet.row_group_size=500",
                "dataset.parquet.columns=[" + ", ".join(f"{{name: c{k}, dtype: float32, size: 8}}" for k in range(20)) + "]",
                "workflow.train=false")
        every, reads_all, size = self.run_bytes("all", ["storage.storage_type=parallel_fs"])
        # All columns: every chunk once per epoch (the file less its footer and magic, twice).
        self.assertGreater(every, 2 * 2 * (size - 65536 // 8) * 0.9)
        five = "storage.storage_options.columns=[c0, c5, c10, c15, c19]"
        chunks, reads, _ = self.run_bytes("chunks", ["storage.storage_type=parallel_fs", five])
        self.assertAlmostEqual(chunks / every, 5 / 20, delta=0.01)
        self.assertEqual(reads, 2 * 2 * (1 + 4 * 5))  # per epoch and file: the footer, 4 row groups x 5 chunks
        # The fork's local_fs reader reads one span from the first projected chunk to the last:
        # with c0 and c19 projected, nearly all of each row group.
        span, reads, _ = self.run_bytes("span", [five])
        self.assertGreater(span / every, 0.95)
        self.assertEqual(reads, 2 * 2 * (1 + 4))
        # pyarrow's pre_buffer coalesces chunks closer than 8 KiB: c0..c4 (5 x 16 KB chunks) stay apart.
        near, reads, _ = self.run_bytes("near", ["storage.storage_type=parallel_fs", "dataset.parquet.pre_buffer=true",
                                                 "storage.storage_options.columns=[c0, c1, c2]"])
        self.assertAlmostEqual(near / every, 3 / 20, delta=0.01)
        self.assertEqual(reads, 2 * 2 * (1 + 4))  # adjacent chunks: one range per row group

    def test_mlperf_files_load_unchanged(self):
        # MLPerf's flux_b200 spells the row size as the old record_length; its dlrm_b200 sets
        # parquet.read_mode. Both load, with a note for each key without effect.
        with open(self.path("mlperf.yaml"), "w") as f:
            f.write("model: {name: flux}\nframework: pytorch\nworkflow: {generate_data: False, train: True, checkpoint: False}\n"
                    "dataset:\n  data_folder: data/flux/\n  format: parquet\n  compression: none\n"
                    "  num_files_train: 4296\n  num_samples_per_file: 288\n  record_length: 2164832\n"
                    "  parquet:\n    row_group_size: 6144\n    read_mode: row_group\n    columns:\n"
                    "      - name: t5_encodings\n        dtype: float32\n        size: 524328\n"
                    "      - name: timestamp\n        dtype: float32\n        size: 7\n        read: false\n"
                    "reader: {data_loader: pytorch, batch_size: 48, read_threads: 8, file_shuffle: seed}\n"
                    "train: {epochs: 1, computation_time: 1.35}\nmetric: {au: 0.90}\n")
        r = self.ok("config", "mlperf.yaml")
        self.assertIn("dataset.parquet.read_mode", r.out + r.err)

    def test_config_errors_name_the_key(self):
        r = self.run_trainio("generate", "default", *self.args("x", ["storage.storage_options.columns=[nope]"]))
        self.assertEqual(r.code, 2, r)
        self.assertIn("storage.storage_options.columns", r.err)
        r = self.run_trainio("generate", "default", *self.args("x", ["dataset.compression=lzf"]))
        self.assertEqual(r.code, 2, r)
        self.assertIn("dataset.compression", r.err)


if __name__ == "__main__":
    unittest.main()
