"""Generation makes durable exactly the files each rank wrote, before it publishes them, and says
how long writing them took and how long until they were durable."""
import glob
import os
import re
import shutil
import unittest
from collections import namedtuple

from harness import TrainioTest

SMALL = ["dataset.data_folder=data", "dataset.num_files_eval=0", "workflow.evaluation=false",
         "dataset.num_subfolders_train=0", "train.computation_time=0.001", "train.epochs=1", "--no-progress"]
MARKER = ".trainio-dataset.json"

Call = namedtuple("Call", "pid name args result start end")
LINE = re.compile(r"^(\d+\.\d+) (\w+)\((.*)\) += (.*?) <([\d.]+)>$")
TRACED = "trace=openat,write,pwrite64,pwritev,pwritev2,rename,renameat,renameat2,fsync,fdatasync,syncfs,sync"


def traced_calls(prefix):
    """Every call `strace -ff -ttt -T -y -o prefix` recorded, from all its files (one per thread),
    in the order they started; a call's end is its start plus its duration."""
    calls = []
    for path in glob.glob(prefix + ".*"):
        pid = int(path.rsplit(".", 1)[1])
        with open(path) as f:
            for line in f:
                m = LINE.match(line.rstrip("\n"))
                if m:
                    start = float(m.group(1))
                    calls.append(Call(pid, m.group(2), m.group(3), m.group(4), start, start + float(m.group(5))))
    return sorted(calls, key=lambda c: c.start)


def fd_path(call):
    """The path strace -y shows for a call's first argument, a file descriptor."""
    m = re.match(r"-?\d+<(.*?)>", call.args)
    return m.group(1) if m else None


def temp_of(path):
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.trainio-tmp")


@unittest.skipUnless(shutil.which("strace"), "strace is not installed")
class GenerationSyncTest(TrainioTest):
    """strace of a generation: no call that flushes a whole file system; one fsync or fdatasync
    of each file a rank wrote, after its last write and before the rename that publishes it; one
    fsync of each folder after the last file was published in it; all before the marker says
    the dataset is complete."""

    def generate(self, *args, ranks=None):
        prefix = self.path("gen.strace")
        self.ok("generate", "default", *SMALL, *args, ranks=ranks,
                wrapper=["strace", "-ff", "-ttt", "-T", "-y", "-e", TRACED, "-o", prefix])
        calls = traced_calls(prefix)
        self.assertTrue(calls, "strace recorded nothing")
        return calls

    def absolute(self, path):
        return os.path.realpath(os.path.join(self.dir, path))

    def dataset_files(self):
        root = self.path("data")
        found = []
        for folder, _, names in os.walk(root):
            found += [os.path.realpath(os.path.join(folder, n)) for n in names if n != MARKER]
        self.assertTrue(found, "no dataset files")
        return sorted(found)

    def check(self, calls, syncs_per_file=lambda path: 1):
        everything = "\n".join(f"{c.pid} {c.name}({c.args[:160]}) = {c.result}" for c in calls[-60:])
        self.assertEqual([c for c in calls if c.name in ("syncfs", "sync")], [],
                         "a call that flushes the whole file system, other jobs' data included")
        renames = [(c, [self.absolute(p) for p in re.findall(r'"((?:[^"\\]|\\.)*)"', c.args)[:2]])
                   for c in calls if c.name.startswith("rename")]
        marker_renames = [c for c, (_, new) in renames if new.endswith("/" + MARKER)]
        self.assertGreaterEqual(len(marker_renames), 2, everything)  # "generating", then "complete"
        complete = marker_renames[-1]
        published = {}  # folder -> when the last file was published in it
        for path in self.dataset_files():
            names = {path, os.path.realpath(temp_of(path))}
            syncs = [c for c in calls if c.name in ("fsync", "fdatasync") and fd_path(c) in names]
            writes = [c for c in calls if c.name.startswith(("write", "pwrite")) and fd_path(c) in names]
            self.assertEqual(len(syncs), syncs_per_file(path),
                             f"{path}: {len(syncs)} fsync or fdatasync calls, one per rank that wrote it expected")
            self.assertTrue(writes, f"{path}: no writes traced")
            self.assertGreaterEqual(min(s.start for s in syncs), max(w.end for w in writes),
                                    f"{path}: synced before its last write")
            moved = [c for c, (old, new) in renames if new == path and old == os.path.realpath(temp_of(path))]
            if moved:  # written under a temporary name: durable before it takes its own
                self.assertLessEqual(max(s.end for s in syncs), moved[-1].start,
                                     f"{path}: renamed into place before it was durable")
                at = moved[-1].end
            else:  # written under its own name (one call): created by its open
                opens = [c for c in calls if c.name == "openat" and "O_CREAT" in c.args and path in c.result]
                self.assertTrue(opens, f"{path}: neither created nor renamed in the trace")
                at = opens[-1].end
            self.assertLessEqual(max(s.end for s in syncs), complete.start, f"{path}: durable after the marker")
            folder = os.path.dirname(path)
            published[folder] = max(published.get(folder, 0), at)
        for folder, at in published.items():
            folder_syncs = [c for c in calls if c.name == "fsync" and fd_path(c) == folder and c.start >= at]
            self.assertTrue(folder_syncs, f"{folder}: no fsync of the folder after its last file was published")
            self.assertLessEqual(folder_syncs[0].end, complete.start, f"{folder}: synced after the marker")
        # The marker's own rename is made durable by an fsync of its folder after it.
        root = self.absolute("data")
        self.assertTrue([c for c in calls if c.name == "fsync" and fd_path(c) == root and c.start >= complete.end],
                        "the complete marker's rename is not followed by an fsync of its folder")

    def test_small_files_written_in_one_call(self):
        # Under their own names (no rename), in two subfolders.
        self.check(self.generate("dataset.num_files_train=12", "dataset.record_length_bytes=4096",
                                 "dataset.num_subfolders_train=2"))

    def test_large_files_renamed_into_place(self):
        self.check(self.generate("dataset.format=npy", "dataset.num_files_train=3",
                                 f"dataset.record_length_bytes={5 << 20}"))

    def test_tfrecord_and_its_index(self):
        self.check(self.generate("dataset.format=tfrecord", "framework=tensorflow", "reader.data_loader=tensorflow", "dataset.num_files_train=4",
                                 "dataset.num_samples_per_file=4", "dataset.record_length_bytes=4096"))

    def test_indexed_binary_and_its_indexes(self):
        self.check(self.generate("dataset.format=indexed_binary", "dataset.num_files_train=4",
                                 "dataset.num_samples_per_file=4", "dataset.record_length_bytes=4096"))

    def test_hdf5_written_by_libhdf5(self):
        self.check(self.generate("dataset.format=hdf5", "dataset.num_files_train=3", "dataset.num_samples_per_file=2",
                                 "dataset.record_length_bytes=4096"))

    def test_two_ranks(self):
        self.check(self.generate("dataset.num_files_train=9", "dataset.record_length_bytes=4096", ranks=2))

    def test_two_ranks_writing_one_file_together(self):
        # Each rank makes its own share of the file durable; rank 0 alone writes the indexes.
        self.check(self.generate("dataset.format=indexed_binary", "dataset.num_files_train=1",
                                 "dataset.num_samples_per_file=8", "dataset.record_length_bytes=4096", ranks=2),
                   syncs_per_file=lambda path: 1 if path.endswith(".idx") else 2)


class GenerationFiguresTest(TrainioTest):
    """summary.json's generate block: the time to write the files and the time until they were
    durable (slowest rank each), with the bandwidths over each, consistent with each other."""

    def check_summary(self, ranks=None):
        self.ok("run", "default", *SMALL, "dataset.num_files_train=24", "dataset.record_length_bytes=65536",
                "--output", "o", ranks=ranks)
        g = self.summary("o")["trainio"]["generate"]
        self.assertEqual(g["files_written"], 24)
        self.assertGreater(g["write_seconds"], 0)
        self.assertGreaterEqual(g["durable_seconds"], g["write_seconds"])
        self.assertEqual(g["duration_seconds"], g["durable_seconds"])  # the phase ends when its files are durable
        self.assertAlmostEqual(g["write_bytes_per_second"], g["bytes_written"] / g["write_seconds"],
                               delta=1e-9 * g["write_bytes_per_second"])
        self.assertAlmostEqual(g["durable_bytes_per_second"], g["bytes_written"] / g["durable_seconds"],
                               delta=1e-9 * g["durable_bytes_per_second"])
        # The syncs are in the phase's storage calls: one per file at least (and one per folder).
        self.assertGreaterEqual(g["io"]["fsync"]["count"], 24)
        # Both times are the ranks' records' (<rank>_records.jsonl), recomputed by trainio verify.
        r = self.ok("verify", "o", "--all")
        for figure in ("write_seconds", "write_bytes_per_second", "durable_seconds", "durable_bytes_per_second",
                       "duration_seconds"):
            self.assertRegex(r.out, rf"\bOK +trainio\.generate\.{figure}: reported", figure)

    def test_one_rank(self):
        self.check_summary()

    def test_two_ranks(self):
        self.check_summary(ranks=2)

    def test_the_console_says_both(self):
        r = self.ok("generate", "default", *SMALL, "dataset.num_files_train=8", "dataset.record_length_bytes=65536")
        m = re.search(r"written in ([\d.]+) (\w+) \(([\d.]+) (\w+)/s\), durable after ([\d.]+) (\w+) \(([\d.]+) (\w+)/s\)",
                      r.out)
        self.assertIsNotNone(m, r.out)
        scale = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1}
        written, durable = float(m.group(1)) * scale[m.group(2)], float(m.group(5)) * scale[m.group(6)]
        self.assertGreaterEqual(durable, written)


if __name__ == "__main__":
    unittest.main()
