"""Parquet against plain programs doing the same work (issue 36; bench.py --only parquet).

- Generation of the DLRM layout (dlrm_b200's 200 columns, row groups of 6,144) in /dev/shm, where
  only the client's cost remains, against the plain writer putting files of the same number and
  size there (create, write, fdatasync, close): trainio also encodes every column, its pages,
  statistics and footer. The sides alternate (bench.alternate()).
- Reads of that dataset with one reader thread, hot page cache, against a plain replay of the very
  calls trainio made (taken from strace of a trainio run: opens, preads and reads at their offsets
  and lengths, closes; tests/bench/plain_ranges.cpp), for the fork's two read patterns: local_fs
  (one read spanning the projected columns of a row group) and parallel_fs (one read per projected
  column chunk). trainio also walks every sample of every batch (the plan, the shuffle, the
  sample's row group, its timing). The first epoch of each side is left out: both pay their
  buffers' first touch there.
- The rows per second one reader thread sustains, beside the ~33 k read_index() calls per second
  the fork's design notes give for Python.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile

import bench

PLAIN_RANGES = os.path.join(bench.ROOT, "build", "tests", "bench", "trainio_plain_ranges")
FILES, ROWS = 8, 61440  # 8 files of 10 row groups: 421 MiB
EPOCHS = 4
DLIO_READ_INDEX_CALLS = 33_000


def dataset_args(folder):
    return ["dlrm_b200", f"dataset.data_folder={folder}", f"dataset.num_files_train={FILES}",
            f"dataset.num_samples_per_file={ROWS}", "dataset.num_files_eval=0", "--no-progress"]


def read_args(folder, storage, out, epochs):
    return ["run", *dataset_args(folder), f"storage.storage_type={storage}", "reader.read_threads=1",
            "train.computation_time=0", f"train.epochs={epochs}", "--output", out]


def traced_calls(folder, storage, work):
    """The calls a one-epoch trainio run makes on the dataset's files, as plain_ranges' list."""
    log, out = os.path.join(work, "strace.log"), os.path.join(work, "traced")
    bench.run(["strace", "-f", "-o", log, "-e", "trace=openat,lseek,read,pread64,close",
               bench.TRAINIO, *read_args(folder, storage, out, 1)])
    shutil.rmtree(out, ignore_errors=True)
    calls, fds, offsets = [], {}, {}
    for line in open(log):
        if m := re.search(r'openat\(AT_FDCWD, "([^"]+\.parquet)", [^)]*\) = (\d+)', line):
            fds[m.group(2)] = m.group(1)
            offsets[m.group(2)] = 0
            calls.append(f"open {m.group(1)}")
        elif (m := re.search(r"lseek\((\d+), (\d+), SEEK_SET\)", line)) and m.group(1) in fds:
            offsets[m.group(1)] = int(m.group(2))
        elif (m := re.search(r"pread64\((\d+), .*, \d+, (\d+)\) = (\d+)", line)) and m.group(1) in fds:
            calls.append(f"read {m.group(2)} {m.group(3)}")
        elif (m := re.search(r"\bread\((\d+), .*, \d+\) = (\d+)", line)) and m.group(1) in fds:
            calls.append(f"read {offsets[m.group(1)]} {m.group(2)}")
            offsets[m.group(1)] += int(m.group(2))
        elif (m := re.search(r"close\((\d+)\)", line)) and m.group(1) in fds:
            del fds[m.group(1)]
            calls.append("close")
    os.remove(log)
    listing = os.path.join(work, f"calls-{storage}.txt")
    with open(listing, "w") as f:
        f.write("\n".join(calls) + "\n")
    reads = [c for c in calls if c.startswith("read ")]
    return listing, len(reads), sum(int(c.split()[2]) for c in reads)


def bench_parquet(table, work, repeat):
    if not os.path.isdir("/dev/shm"):
        print("  (no /dev/shm: the Parquet cases skipped)")
        return
    for tool in ("strace", PLAIN_RANGES, bench.PLAIN_WRITER):
        if not shutil.which(tool) and not os.path.exists(tool):
            print(f"  ({tool} is missing: the Parquet cases skipped; scripts/bench.sh builds the plain programs)")
            return
    base = tempfile.mkdtemp(prefix="trainio-bench-parquet-", dir="/dev/shm")
    try:
        data = os.path.join(base, "data")
        bench.run([bench.TRAINIO, "generate", *dataset_args(data)])  # the files' number and size
        files = bench.data_files(data)
        total = sum(os.path.getsize(f) for f in files)
        ours, theirs = [], []

        def trainio_side():
            shutil.rmtree(data, ignore_errors=True)
            out = bench.run([bench.TRAINIO, "generate", *dataset_args(data)]).stdout
            ours.append(total / bench.generation_seconds(out) / bench.MIB)

        def plain_side():
            plain = os.path.join(base, "plain")
            os.makedirs(plain)
            seconds = float(bench.run([bench.PLAIN_WRITER, plain, str(len(files)), str(total // len(files)),
                                       str(bench.MIB), "place", "sync"]).stdout)
            theirs.append(total / seconds / bench.MIB)
            shutil.rmtree(plain)

        bench.alternate(repeat, trainio_side, plain_side)
        table.add(f"generate parquet, DLRM layout, {FILES} files x {ROWS} rows, tmpfs (reference: plain writer)",
                  ours, theirs, "MiB/s", 0.70)

        for storage, what in (("local_fs", "one read per row group"), ("parallel_fs", "one read per column chunk")):
            listing, reads, read_bytes = traced_calls(data, storage, base)
            ours, theirs, rows = [], [], []
            out = os.path.join(base, "out")

            def trainio_side():
                shutil.rmtree(out, ignore_errors=True)
                bench.run([bench.TRAINIO, *read_args(data, storage, out, EPOCHS)])
                with open(os.path.join(out, "summary.json")) as f:
                    epochs = json.load(f)["trainio"]["epochs"][1:]
                seconds = sum(e["train"]["duration_seconds"] for e in epochs)
                ours.append(read_bytes * len(epochs) / seconds / bench.MIB)
                rows.append(sum(e["train"]["samples"] for e in epochs) / seconds)

            def plain_side():
                per_epoch = [float(x) for x in bench.run([PLAIN_RANGES, listing, str(EPOCHS)]).stdout.split()][1:]
                theirs.append(read_bytes * len(per_epoch) / sum(per_epoch) / bench.MIB)

            bench.alternate(repeat, trainio_side, plain_side)
            shutil.rmtree(out, ignore_errors=True)
            table.add(f"read parquet, DLRM layout, {storage} ({what}: {reads} calls an epoch), 1 thread, hot "
                      f"(reference: plain replay of the same calls)", ours, theirs, "MiB/s", 0.90)
            table.add_absolute(f"parquet rows per second, one reader thread, {storage} (DLIO's fork: ~33 k "
                               f"read_index() calls/s)", sorted(rows)[len(rows) // 2], "rows/s", DLIO_READ_INDEX_CALLS)
    finally:
        shutil.rmtree(base, ignore_errors=True)
