"""The checkpoint write-strategy matrix (issue 37 §4; bench.py --only checkpoint-matrix).

The shape of arXiv 2512.24511's result on this machine: one checkpoint of 2 ranks, each holding
16 tensors of 12 MiB (int8; DLIO's legacy `model.layer_parameters`, one layer, every rank
writing), written in every cell of
    {buffered, O_DIRECT} x {one file per tensor, one file per rank} x {small calls, 64 MiB calls}
by trainio (checkpoint.file_layout per_tensor / per_rank, checkpoint.write_buffer_bytes,
checkpoint.odirect) and by fio doing the same: the same files (16 per rank, or 1 of 192 MiB), the
same sizes, write(2) calls of the same sizes, the same O_DIRECT flag, and an fsync of each file
after its last write. The small calls are 6,144 B (1.5 pages: unaligned) buffered; O_DIRECT
refuses unaligned calls, so its small calls are 12,288 B (3 pages), the smallest aligned size
that still divides the tensors.

Sizes are chosen so that every file is a whole number of calls: fio never writes a short last
call (it stops at the last whole block), so a file that is not would not be the same file.
Buffered results mean storage because every file is fsynced in both programs' time (trainio's
checkpoint.fsync; fio's fsync=<calls per file>, and end_fsync for the last file, which fio's
fsync=N leaves unsynced when the job ends); each run starts after the previous files were deleted,
synced and the disk left to settle. The page cache is not dropped.

Each cell first runs both sides once under strace and prints the calls per file, checking that
they match (open flags are compared on O_DIRECT, O_SYNC, O_DSYNC, O_APPEND: fio opens O_RDWR
where trainio opens O_WRONLY|O_TRUNC|O_CLOEXEC, as Python's open(name, "wb") does), then times
`repeat` rounds, alternating. Figures: MB/s (10^6 bytes/s) of the checkpoint's bytes over the
slowest rank's time (trainio's summary: bytes_per_second) and fio's group bandwidth (bytes over
the longest job's runtime).
"""
import collections
import glob
import json
import os
import re
import shutil
import subprocess

import bench

RANKS = 2
TENSORS = 16
TENSOR = 12 << 20  # 3 x 2^22: divisible by both small call sizes; 16 of them are 3 x 64 MiB
SMALL_BUFFERED = 6144
SMALL_DIRECT = 12288
BIG = 64 << 20
MB = 1e6

CELLS = [(direct, layout, small) for direct in (False, True) for layout in ("per_tensor", "per_rank")
         for small in (True, False)]


def cell_name(direct, layout, small):
    call = (SMALL_DIRECT if direct else SMALL_BUFFERED) if small else BIG
    what = f"{call:,} B calls" if small else "64 MiB calls"
    return f"{'O_DIRECT' if direct else 'buffered'}, {layout.replace('_', ' ')}, {what}"


def geometry(direct, layout, small):
    """(files per rank, file size, call size, calls per file) of a cell."""
    buffer = (SMALL_DIRECT if direct else SMALL_BUFFERED) if small else BIG
    files, size = (TENSORS, TENSOR) if layout == "per_tensor" else (1, TENSORS * TENSOR)
    call = min(buffer, size)
    assert size % call == 0, "every file must be a whole number of calls (fio writes no short last call)"
    return files, size, call, size // call, buffer


def trainio_args(folder, out, direct, layout, small):
    buffer = geometry(direct, layout, small)[4]
    return ["run", "default", "framework=pytorch", "workflow.train=false", "workflow.generate_data=false",
            "workflow.checkpoint=true", f"checkpoint.checkpoint_folder={folder}", "checkpoint.num_checkpoints_write=1",
            "checkpoint.num_checkpoints_read=0", "checkpoint.fsync=true", "checkpoint.atomic_files=false",
            "checkpoint.time_between_checkpoints=0", "checkpoint.type=all_ranks", "model.model_size_bytes=0",
            "model.num_layers=1", f"model.layer_parameters=[{','.join([str(TENSOR)] * TENSORS)}]",
            f"checkpoint.file_layout={layout}", f"checkpoint.write_buffer_bytes={buffer}",
            f"checkpoint.odirect={'true' if direct else 'false'}", "--no-progress", "--output", out]


def fio_args(folder, direct, layout, small):
    files, size, call, calls, _ = geometry(direct, layout, small)
    return ["--output-format=json", "--group_reporting", f"--directory={folder}", "--name=ckpt", "--rw=write",
            "--ioengine=sync", f"--numjobs={RANKS}", f"--nrfiles={files}", f"--filesize={size}", f"--bs={call}",
            "--file_service_type=sequential", "--create_on_open=1", "--fallocate=none", f"--fsync={calls}",
            "--end_fsync=1", "--iomem=mmap", f"--direct={1 if direct else 0}"]


OPEN = re.compile(r'^openat\([^,]+, "[^"]+", ([A-Z_|]+).*\) += \d+<([^>]+)>')  # the path strace -y resolved
CALL = re.compile(r"^(write|fsync|fdatasync|close)\(\d+<([^>]+)>(.*)\) += (-?\d+)")
FLAGS_THAT_MATTER = {"O_DIRECT", "O_SYNC", "O_DSYNC", "O_APPEND"}


def traced(prefix, under):
    """Per file under `under`, from `strace -ff -y -o prefix`: its open flags, its write sizes and
    its fsyncs, summed over all processes and threads."""
    files = collections.defaultdict(lambda: {"flags": set(), "writes": [], "fsync": 0})
    for path in glob.glob(prefix + ".*"):
        with open(path) as f:
            for line in f:
                m = OPEN.match(line)
                if m and m.group(2).startswith(under):
                    files[m.group(2)]["flags"] |= set(m.group(1).split("|"))
                    continue
                m = CALL.match(line)
                if not m or not m.group(2).startswith(under):
                    continue
                if m.group(1) == "write":
                    files[m.group(2)]["writes"].append(int(m.group(4)))
                elif m.group(1) in ("fsync", "fdatasync"):
                    files[m.group(2)]["fsync"] += 1
    return files


def shape(files):
    """What the calls of a side come to: a count of each (writes, fsyncs, flags that matter)."""
    return collections.Counter((tuple(f["writes"]), f["fsync"] >= 1, frozenset(f["flags"] & FLAGS_THAT_MATTER))
                               for f in files.values())


def describe(files):
    writes = sorted({len(f["writes"]) for f in files.values()})
    sizes = sorted({s for f in files.values() for s in f["writes"]})
    fsyncs = sorted({f["fsync"] for f in files.values()})
    flags = sorted(set().union(*(f["flags"] for f in files.values()))) if files else []
    return (f"{len(files)} files, {'/'.join(map(str, writes))} write(s) per file of {'/'.join(f'{s:,}' for s in sizes)} B, "
            f"{'/'.join(map(str, fsyncs))} fsync(s) per file, open {'|'.join(flags)}")


def check_calls(work, cell):
    """Runs each side once under strace; prints and compares their calls per file."""
    strace_dir = os.path.join(work, "strace")
    folder, fio_folder, out = (os.path.join(work, n) for n in ("mx-ckpt", "mx-fio", "mx-out"))
    shutil.rmtree(strace_dir, ignore_errors=True)
    bench.clear_and_settle(folder, fio_folder, out)
    os.makedirs(strace_dir)
    os.makedirs(fio_folder)
    trace = ["strace", "-ff", "-y", "-e", "trace=openat,write,fsync,fdatasync,close", "-o"]
    bench.run(trace + [os.path.join(strace_dir, "t")] + ["mpirun", "-np", str(RANKS), "--oversubscribe", "--bind-to", "none",
                                                         bench.TRAINIO] + trainio_args(folder, out, *cell))
    bench.run(trace + [os.path.join(strace_dir, "f"), "fio"] + fio_args(fio_folder, *cell))
    ours = traced(os.path.join(strace_dir, "t"), folder + "/")
    theirs = traced(os.path.join(strace_dir, "f"), fio_folder + "/")
    # fio's end_fsync opens every file again to fsync it: count what each file got, at least one.
    same = shape(ours) == shape(theirs)
    print(f"  calls, trainio: {describe(ours)}", flush=True)
    print(f"  calls, fio:     {describe(theirs)}", flush=True)
    print(f"  calls per file {'the same' if same else 'DIFFER'} (writes and their sizes, fsync, O_DIRECT/O_SYNC/O_DSYNC/O_APPEND)",
          flush=True)
    shutil.rmtree(strace_dir, ignore_errors=True)
    bench.clear_and_settle(folder, fio_folder, out)
    return same


def bench_checkpoint_matrix(table, work, repeat, strace=True):
    folder, fio_folder, out = (os.path.join(work, n) for n in ("mx-ckpt", "mx-fio", "mx-out"))
    have_strace = strace and shutil.which("strace") is not None
    if strace and not have_strace:
        print("  (strace is not installed: the calls are not compared)")
    for cell in CELLS:
        name = cell_name(*cell)
        print(f"checkpoint matrix: {name}", flush=True)
        if have_strace:
            check_calls(work, cell)
        ours, theirs = [], []

        def trainio_side():
            bench.clear_and_settle(folder, fio_folder, out)
            bench.trainio(trainio_args(folder, out, *cell), RANKS)
            with open(os.path.join(out, "summary.json")) as f:
                saves = [c for c in json.load(f)["trainio"]["checkpoint"]["checkpoints"] if c["kind"] == "save"]
            ours.append(saves[0]["bytes_per_second"] / MB)

        def fio_side():
            bench.clear_and_settle(folder, fio_folder, out)
            os.makedirs(fio_folder)
            job = json.loads(bench.run(["fio"] + fio_args(fio_folder, *cell)).stdout)["jobs"][0]
            theirs.append(job["write"]["bw_bytes"] / MB)

        bench.alternate(repeat, trainio_side, fio_side)
        target = 0.90 if cell[1] == "per_rank" and not cell[2] else None
        table.add(f"checkpoint matrix: {name}", ours, theirs, "MB/s", target)
    bench.clear_and_settle(folder, fio_folder, out)
