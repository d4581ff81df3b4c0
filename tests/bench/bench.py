#!/usr/bin/env python3
"""trainio against fio on the same machine, same files, same run: prints figures and ratios.

Not a test: it measures, it does not judge (the "target" column states the goal from the issue
that set it). Each case runs trainio and fio alternately `--repeat` times and takes the median of
the rounds' own ratios, because a shared machine is noisy in absolute numbers but steadier in
ratios taken side by side.

fio reads into page-aligned memory (--iomem=mmap), as trainio does: on some machines a copy from
the page cache into malloc's unaligned memory runs at a fifth of the speed, and fio's default
would then measure its own buffer rather than the storage.
"""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TRAINIO = os.environ.get("TRAINIO", os.path.join(ROOT, "build", "trainio"))
BARRIER_BENCH = os.path.join(ROOT, "build", "tests", "bench", "trainio_barrier_bench")
S3_BENCH = os.path.join(ROOT, "build", "tests", "bench", "trainio_s3_bench")
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from peak_rss import run_measured  # noqa: E402
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_mpi_yield_when_idle": "1"}
MIB = 1 << 20


def run(cmd, extra_env=None, **kw):
    env = dict(os.environ, **MPI_ENV, **(extra_env or {}))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return proc


def sync_and_settle():
    subprocess.run(["sync"])
    time.sleep(1)


def clear_and_settle(*folders):
    """Deletes `folders` and waits for the disk to take it in: on this machine's virtual disk the
    first writer after gigabytes were deleted runs slower for a while, so every side of a
    comparison starts from here."""
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    sync_and_settle()
    time.sleep(2)


def drop_caches():
    """Machine-wide page-cache drop (root only); returns whether it worked."""
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def fio(args, directory=None):
    """fio's job figures; files are named with absolute paths when `directory` is None."""
    where = [f"--directory={directory}"] if directory else []
    out = run(["fio", "--output-format=json", "--group_reporting"] + where + args)
    job = json.loads(out.stdout)["jobs"][0]
    return job


def trainio(args, ranks):
    cmd = [TRAINIO] + args
    if ranks > 1:
        # Unbound, as fio's jobs are (OpenMPI binds each of 2 ranks to one core by default).
        cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] + cmd
    start = time.monotonic()
    out = run(cmd)
    return out, time.monotonic() - start


def durable_rate(text):
    """The rate over generation's durable time that trainio prints ("durable after 2.20 s
    (465.45 MiB/s)"), in MiB/s: until the last file the slowest rank wrote was on stable storage."""
    m = re.search(r"durable after [\d.]+ \S+ \(([\d.]+) (B|KiB|MiB|GiB|TiB)/s\)", text)
    if not m:
        sys.exit(f"no durable rate in trainio's output:\n{text}")
    scale = {"B": 1 / MIB, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024, "TiB": 1024 * 1024}[m.group(2)]
    return float(m.group(1)) * scale


def train_figures(out_dir):
    """What trainio measured over all epochs of a run: samples, sample bytes, seconds."""
    with open(os.path.join(out_dir, "summary.json")) as f:
        epochs = json.load(f)["trainio"]["epochs"]
    samples = sum(e["train"]["samples"] for e in epochs)
    sample_bytes = sum(e["train"]["sample_bytes"] for e in epochs)
    seconds = sum(e["train"]["duration_seconds"] for e in epochs)
    return samples, sample_bytes, seconds


def peak_rss_mib_of(cmd):
    """Runs a single-process command and returns its own peak resident memory in MiB."""
    code, peak, err = run_measured(cmd, env=dict(os.environ, **MPI_ENV))
    if code != 0:
        sys.exit(f"command failed ({code}): {' '.join(cmd)}\n{err}")
    return peak


class Table:
    def __init__(self):
        self.rows = []

    def add(self, case, ours, theirs, unit, target):
        """`ours` and `theirs` are a figure each, or the figures of the rounds, run in turn: then
        each side shows its median and the ratio is the median of the rounds' own ratios. This
        machine's speed shifts for seconds at a time, so a round's two runs, taken one after the
        other, are comparable where the medians of the two sides may come from different phases."""
        rounds = ""
        if isinstance(ours, list):
            pairs = [o / t for o, t in zip(ours, theirs) if t]
            ours, theirs = statistics.median(ours), statistics.median(theirs)
            ratio = statistics.median(pairs) if pairs else float("nan")
            rounds = f" (rounds {min(pairs):.2f}-{max(pairs):.2f})" if len(pairs) > 1 else ""
        else:
            ratio = ours / theirs if theirs else float("nan")
        verdict = "" if target is None else ("meets" if ratio >= target else "BELOW")
        self.rows.append((case, f"{ours:,.1f} {unit}", f"{theirs:,.1f} {unit}", f"{ratio:.2f}",
                          "" if target is None else f">= {target:.2f}", verdict))
        print(f"  {case}: trainio {ours:,.1f} {unit}, reference {theirs:,.1f} {unit}, ratio {ratio:.2f}{rounds}",
              flush=True)

    def add_absolute(self, case, ours, unit, target, higher_is_better=True):
        """A figure with an absolute target and no fio counterpart."""
        meets = ours >= target if higher_is_better else ours <= target
        shown = f"{ours:,.3f}" if abs(ours) < 1 else f"{ours:,.2f}" if abs(ours) < 10 else f"{ours:,.1f}"
        self.rows.append((case, f"{shown} {unit}", "-", "-", f"{'>=' if higher_is_better else '<='} {target:,.0f} {unit}" if target == int(target)
                          else f"{'>=' if higher_is_better else '<='} {target:g} {unit}",
                          "meets" if meets else "BELOW" if higher_is_better else "ABOVE"))
        print(f"  {case}: trainio {shown} {unit}", flush=True)

    def print(self):
        header = ("case", "trainio", "reference", "ratio", "target", "")
        widths = [max(len(str(r[i])) for r in self.rows + [header]) for i in range(6)]
        line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
        print()
        print(line(header))
        print(line(["-" * w for w in widths]))
        for r in self.rows:
            print(line(r))


def bench_generate(table, work, ranks, files_per_rank, size_mib, repeat, fmt):
    """Dataset generation on the benchmark's disk (buffered writes, each file made durable: trainio's
    rate over its durable time) against two references of the same number and size of files, one
    writer per rank: the plain writer (tests/bench/plain_writer.cpp, committing each file by rename
    as trainio does, after an fdatasync made on one of 16 threads as trainio makes it, and its
    folder fsynced at the end; wall clock of the slowest writer, as trainio's generation time is
    its slowest rank's), the like-for-like target; and fio's sequential buffered writes with an
    fsync of each file at the end (end_fsync, in fio's time; informative: fio's figure is its
    bandwidth over its own job time, files created on open, and the two were not doing the same
    work when its ratio came out well above 1). Each side starts from the same state (every
    earlier file deleted, synced, settled) and the order rotates from round to round: on this machine's
    virtual disk, whichever writer came first after the deletion of the previous gigabytes ran
    several times slower than the one after it (trainio first: 1.0 s against the plain writer's
    0.52 s; plain writer first: 1.9-2.3 s against trainio's 0.22-0.28 s), which a fixed order
    turned into a verdict on one side."""
    files = files_per_rank * ranks
    record = size_mib * MIB
    d, p, f = (os.path.join(work, name) for name in ("gen", "plain", "fio"))
    ours, plain, theirs = [], [], []
    total = files * record  # corrected to the files' real size once trainio has written them

    def settle():
        clear_and_settle(d, p, f)

    def run_ours():
        nonlocal total
        settle()
        out, _ = trainio(["generate", "default", f"dataset.format={fmt}", f"dataset.data_folder={d}",
                          f"dataset.num_files_train={files}", "dataset.num_files_eval=0", "workflow.evaluation=false",
                          f"dataset.record_length_bytes={record}", "dataset.num_subfolders_train=0",
                          "--no-progress"], ranks)
        ours.append(durable_rate(out.stdout))
        total = sum(os.path.getsize(name) for name in data_files(d))

    def run_plain():
        settle()
        for r in range(ranks):
            os.makedirs(os.path.join(p, str(r)))
        writers = [subprocess.Popen([PLAIN_WRITER, os.path.join(p, str(r)), str(files_per_rank), str(total // files),
                                     str(MIB), "rename", "sync"], stdout=subprocess.PIPE, text=True)
                   for r in range(ranks)]
        seconds = max(float(w.communicate()[0]) for w in writers)
        plain.append(total / seconds / MIB)

    def run_fio():
        settle()
        os.makedirs(f)
        job = fio(["--name=write", "--rw=write", "--bs=4m", "--ioengine=psync", f"--numjobs={ranks}",
                   f"--nrfiles={files_per_rank}", f"--filesize={size_mib}m", "--file_service_type=sequential",
                   "--create_on_open=1", "--end_fsync=1"], f)
        theirs.append(job["write"]["bw_bytes"] / MIB)

    run_ours()  # a first, uncounted run learns the files' real size (headers included)
    ours.clear()
    sides = [run_ours, run_plain, run_fio]
    for round in range(repeat):
        for side in sides[round % 3:] + sides[:round % 3]:
            side()
    settle()
    title = f"generate {fmt}, {ranks} ranks x {files_per_rank} files x {size_mib} MiB"
    table.add(f"{title} (reference: plain writer + fdatasync + rename)", ours, plain,
              "MiB/s", 0.70)
    table.add(f"{title} (reference: fio)", ours, theirs, "MiB/s", None)


PLAIN_WRITER = os.path.join(ROOT, "build", "tests", "bench", "trainio_plain_writer")
PLAIN_HDF5_WRITER = os.path.join(ROOT, "build", "tests", "bench", "trainio_plain_hdf5_writer")
PLAIN_READER = os.path.join(ROOT, "build", "tests", "bench", "trainio_plain_reader")


def generation_seconds(text):
    """The durable time trainio prints for generation ("... durable after 234.53 ms (...)"): the
    phase's own wall clock until its files were on stable storage, without process and MPI
    start-up."""
    m = re.search(r"durable after ([\d.]+) (µs|us|ms|s|min)\b", text)
    if not m:
        sys.exit(f"no generation time in trainio's output:\n{text}")
    return float(m.group(1)) * {"µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1, "min": 60}[m.group(2)]


def bench_generate_plain(table, work, repeat):
    """Generation against a plain writer (tests/bench/plain_writer.cpp: create, write 1 MiB pieces
    of a buffer filled beforehand, fdatasync on one of 16 threads as trainio syncs each file,
    close, fsync of the folder at the end) putting the same number of files of the same size in a
    tmpfs, where only the client's cost remains; wall clock of the phase until its files are
    durable on both sides, alternating. trainio also makes the content, frames the format and
    records every call. A second reference, the plain writer committing each file by rename as
    trainio does, shows how much of the gap is that protocol (informative: the target is against
    the plain writer). HDF5 has a third, like for like: a plain libhdf5 program making the same
    files (same datasets, shapes and layout, a buffer filled beforehand, fdatasync, rename), since
    libhdf5's own work per file (metadata cache, object headers) is part of making an HDF5 file
    whoever calls it."""
    shm = "/dev/shm"
    if not os.path.isdir(shm):
        print("  (no /dev/shm: generation against the plain writer skipped)")
        return
    cases = [("npz, 128 files x 4 MiB", ["dataset.format=npz", "dataset.num_files_train=128",
                                         "dataset.num_samples_per_file=1", f"dataset.record_length_bytes={4 * MIB}"]),
             ("hdf5, 128 files x 8 x 128 KiB", ["dataset.format=hdf5", "dataset.num_files_train=128",
                                                "dataset.num_samples_per_file=8", "dataset.record_length_bytes=131072"]),
             ("npz, 4096 files x 1 KiB", ["dataset.format=npz", "dataset.num_files_train=4096",
                                          "dataset.num_samples_per_file=1", "dataset.record_length_bytes=1024"])]
    hdf5_shape = {"hdf5, 128 files x 8 x 128 KiB": ("8", "362x362")}  # DLIO's square samples of 131,044 B
    base = tempfile.mkdtemp(prefix="trainio-bench-", dir=shm)
    try:
        for title, shape in cases:
            ours, theirs, renamed, libhdf5 = [], [], [], []
            for _ in range(repeat):
                d = os.path.join(base, "gen")
                shutil.rmtree(d, ignore_errors=True)
                out = run([TRAINIO, "generate", "default", f"dataset.data_folder={d}", "dataset.num_files_eval=0",
                           "workflow.evaluation=false", "dataset.num_subfolders_train=0",
                           "dataset.record_length_bytes_stdev=0", "--no-progress", *shape])
                files = data_files(d)
                total = sum(os.path.getsize(f) for f in files)
                ours.append(total / generation_seconds(out.stdout) / MIB)
                shutil.rmtree(d, ignore_errors=True)
                p = os.path.join(base, "plain")
                shutil.rmtree(p, ignore_errors=True)
                os.makedirs(p)
                seconds = float(run([PLAIN_WRITER, p, str(len(files)), str(total // len(files)), str(MIB), "place",
                                     "sync"]).stdout)
                theirs.append(total / seconds / MIB)
                shutil.rmtree(p, ignore_errors=True)
                os.makedirs(p)
                seconds = float(run([PLAIN_WRITER, p, str(len(files)), str(total // len(files)), str(MIB),
                                     "rename", "sync"]).stdout)
                renamed.append(total / seconds / MIB)
                shutil.rmtree(p, ignore_errors=True)
                if title in hdf5_shape:
                    os.makedirs(p)
                    seconds = float(run([PLAIN_HDF5_WRITER, p, str(len(files)), *hdf5_shape[title], "sync"]).stdout)
                    libhdf5.append(sum(os.path.getsize(os.path.join(p, f)) for f in os.listdir(p)) / seconds / MIB)
                    shutil.rmtree(p, ignore_errors=True)
            table.add(f"generate {title}, tmpfs (reference: plain writer)", ours,
                      theirs, "MiB/s", 0.70)
            table.add(f"generate {title}, tmpfs (reference: plain writer + rename)", ours,
                      renamed, "MiB/s", None)
            if libhdf5:
                table.add(f"generate {title}, tmpfs (reference: plain libhdf5 writer)", ours,
                          libhdf5, "MiB/s", 0.70)
    finally:
        shutil.rmtree(base, ignore_errors=True)


READ_COMMON = ["workflow.generate_data=false", "workflow.evaluation=false", "dataset.num_files_eval=0",
               "dataset.num_subfolders_train=0", "train.computation_time=0", "reader.file_shuffle=off"]


def generate(work, name, args):
    d = os.path.join(work, name)
    if not os.path.isdir(d):
        run([TRAINIO, "generate", "default", f"dataset.data_folder={d}", "dataset.num_files_eval=0",
             "workflow.evaluation=false", "dataset.num_subfolders_train=0", "--no-progress"] + args)
        sync_and_settle()  # write-back of the new files would otherwise run during the reads
    return d


def trainio_read(work, data, args, name="out", extra_env=None):
    out = os.path.join(work, name)
    shutil.rmtree(out, ignore_errors=True)
    run([TRAINIO, "run", "default", f"dataset.data_folder={data}", *READ_COMMON, *args, "--output", out],
        extra_env=extra_env)
    figures = train_figures(out)
    shutil.rmtree(out, ignore_errors=True)
    return figures


def data_files(data):
    return sorted(f for f in glob.glob(os.path.join(data, "train", "*")) if not f.endswith(".idx"))


def bench_validate(table, work, repeat, files=2000):
    """`validate` against `generate` of the same small files (1 KiB, one sample per file), wall
    clock on both sides, alternating: the issue asks validation to run at half generation's speed
    or better, since the docs send users to it after every interruption."""
    for fmt in ("npz", "hdf5", "indexed_binary", "tfrecord"):
        d = os.path.join(work, "validate")
        args = ["default", f"dataset.format={fmt}", f"dataset.data_folder={d}", f"dataset.num_files_train={files}",
                "dataset.num_files_eval=0", "workflow.evaluation=false", "dataset.num_samples_per_file=1",
                "dataset.record_length_bytes=1024", "--no-progress"]
        if fmt == "tfrecord":
            args += ["framework=tensorflow", "reader.data_loader=tensorflow"]
        generated, validated = [], []
        for _ in range(repeat):
            shutil.rmtree(d, ignore_errors=True)
            sync_and_settle()
            start = time.monotonic()
            run([TRAINIO, "generate", *args])
            generated.append(files / (time.monotonic() - start))
            sync_and_settle()
            start = time.monotonic()
            run([TRAINIO, "validate", *args])
            validated.append(files / (time.monotonic() - start))
        shutil.rmtree(d, ignore_errors=True)
        table.add(f"validate {fmt}, {files} files x 1 KiB (reference: generate)", validated,
                  generated, "files/s", 0.50)


MALLOC_COUNT = os.path.join(ROOT, "build", "tests", "bench", "libtrainio_malloc_count.so")


def mallocs_per_sample(work, fmt, extra=()):
    """Heap allocations per sample read: runs of 2 and 6 epochs over datasets of 16 and 80 files
    (8 samples of 4 KiB each, one reader thread, hot cache); the difference of the differences
    leaves out what a run, a file's first sight and an epoch cost, keeping what a sample costs."""
    counts = {}
    for files in (16, 80):
        d = os.path.join(work, f"mallocs-{fmt}-{files}")
        common = ["default", f"dataset.format={fmt}", f"dataset.data_folder={d}", f"dataset.num_files_train={files}",
                  "dataset.num_samples_per_file=8", "dataset.record_length_bytes=4096",
                  "dataset.record_length_bytes_stdev=0", *READ_COMMON, "reader.batch_size=4", "reader.read_threads=1",
                  "workflow.checkpoint=false", *extra]
        if fmt == "tfrecord":
            common += ["framework=tensorflow", "reader.data_loader=tensorflow"]
        run([TRAINIO, "generate", *common, "--no-progress"])
        for epochs in (2, 6):
            count_file = os.path.join(work, "mallocs.count")
            if os.path.exists(count_file):
                os.remove(count_file)
            out = os.path.join(work, "mallocs-out")
            shutil.rmtree(out, ignore_errors=True)
            run([TRAINIO, "run", *common, f"train.epochs={epochs}", "--no-progress", "--output", out],
                extra_env={"LD_PRELOAD": MALLOC_COUNT, "TRAINIO_MALLOC_COUNT_FILE": count_file})
            counts[files, epochs] = int(open(count_file).read().split()[0])
            shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(d, ignore_errors=True)
    per_epoch_extra = (counts[80, 6] - counts[80, 2]) - (counts[16, 6] - counts[16, 2])
    # A difference of differences can come out a hair below zero (the result documents' noise,
    # bench_mallocs): fewer than no allocations is not a count, so it reads as none.
    return max(0.0, per_epoch_extra / (4 * 64 * 8))


def bench_mallocs(table, work):
    """Heap allocations per sample on the read path, for each format's framework reader (and the
    native reader): the goal is none. The method's noise floor is a few allocations per run in the
    result documents, whose strings grow with the digits of the figures (up to about 0.003 per
    sample here), so anything under 0.005 is none."""
    cases = [(fmt, ()) for fmt in ("npz", "npy", "hdf5", "tfrecord", "indexed_binary", "jpeg", "png", "csv")]
    cases.append(("npz", ("reader.access=sample", "reader.data_loader=native_dali")))
    for fmt, extra in cases:
        title = f"heap allocations per sample, {fmt}" + (", access=sample" if extra else "")
        table.add_absolute(title, mallocs_per_sample(work, fmt, extra), "per sample", 0.005, higher_is_better=False)


def plain_read(files, per_file, threads, mode, epochs=3):
    """MiB/s of the plain reader (tests/bench/plain_reader.cpp) reading 1 MiB samples of `files`
    in file order, batches of 8 round robin over `threads` workers, each file opened per sample
    (mode "open"), kept open ("keep"), kept open with O_DIRECT ("direct"), or kept open with a
    training loop taking the batches ("loop:PREFETCH")."""
    seconds = float(run([PLAIN_READER, str(MIB), str(per_file), str(threads), "8", str(epochs), mode,
                         *files]).stdout)
    return len(files) * per_file * epochs / seconds


def hot_data(work, gib):
    """The 1 MiB samples the hot-read cases read (generated once per bench run): the folder, its
    shape, and the samples per file."""
    per_file = 128 * gib
    shape = ["dataset.format=indexed_binary", "dataset.num_files_train=8",
             f"dataset.num_samples_per_file={per_file}", f"dataset.record_length_bytes={MIB}"]
    return generate(work, "hot", shape), shape, per_file


def bench_hot_read(table, work, gib, repeat):
    """Hot page cache, one read per 1 MiB sample, 2 reader threads, against fio psync with 2 jobs
    reading the same files (each job reads them all; the figures are aggregate bandwidths).
    Like for like, trainio keeps its files open (read_type: memory) as fio does. DLIO's
    open-read-close per sample (on_demand) is held against the plain reader doing those calls
    (fio cannot open a file per read), and with one thread the plain reader keeping its files open
    shows what reading into a batch's distinct buffers, instead of fio's one, costs by itself.
    fio's jobs never wait for anyone; with DLIO's default prefetch_size of 2 and 2 threads, each
    of trainio's workers may hold one batch (PyTorch's prefetch_factor rule) and waits for the
    training loop to take it before reading the next, so the comparison gives the workers room
    (prefetch_size 8: 4 batches each), and a line of its own shows what the default's hand-overs
    cost. With 2 readers on this 2-core machine the training loop has no core of its own: it is
    woken once per batch and takes turns on the readers' cores (with 1 reader it polls on the spare
    core, and the reader pays nothing for its batches' hand-over). fio has no training loop, so a
    line of its own holds trainio against the plain reader with one ("loop:8": the workers read
    each sample into one buffer, as trainio's do, and hand each batch to a main thread that blocks
    until the next is done): what is left is trainio's own cost."""
    data, shape, per_file = hot_data(work, gib)
    files = len(data_files(data))
    names = ":".join(data_files(data))
    subprocess.run(["cat"] + data_files(data), stdout=subprocess.DEVNULL, check=True)  # warm the cache
    ours = {("memory", 8): [], ("on_demand", 8): [], ("memory", 2): []}
    theirs, plain_opened, plain_loop = [], [], []
    for _ in range(repeat):
        for (read_type, prefetch), rates in ours.items():
            _, sample_bytes, seconds = trainio_read(work, data, shape + [
                "reader.access=sample", "reader.read_threads=2", "reader.batch_size=8", "reader.sample_shuffle=off",
                f"reader.read_type={read_type}", f"reader.prefetch_size={prefetch}", "train.epochs=3"])
            rates.append(sample_bytes / seconds / MIB)
        plain_opened.append(plain_read(data_files(data), per_file, 2, "open"))
        plain_loop.append(plain_read(data_files(data), per_file, 2, "loop:8"))
        job = fio(["--name=hot", f"--filename={names}", "--rw=read", "--bs=1m", "--ioengine=psync", "--numjobs=2",
                   f"--size={files * per_file}m", "--file_service_type=sequential", "--invalidate=0",
                   "--iomem=mmap"])
        theirs.append(job["read"]["bw_bytes"] / MIB)
    table.add("hot cache, access sample, 1 MiB, 2 threads, prefetch 8", ours[("memory", 8)],
              theirs, "MiB/s", 0.95)
    table.add("  the same vs the plain reader with a training loop woken per batch", ours[("memory", 8)],
              plain_loop, "MiB/s", 0.95)
    table.add("  the same, opened per sample (on_demand), vs the plain reader",
              ours[("on_demand", 8)], plain_opened, "MiB/s", 0.95)
    table.add("  the same with prefetch 2 (a batch per worker) vs prefetch 8", ours[("memory", 2)],
              ours[("memory", 8)], "MiB/s", None)
    # One reader thread against one fio job: with as many readers as this machine has cores,
    # trainio's training loop (a third thread, woken once per batch) shares their cores, which
    # fio's jobs do not have to; with one reader it has a core of its own, as on a training node,
    # and polls for its batches there.
    ours1, theirs1, plain_kept = [], [], []
    for _ in range(repeat):
        _, sample_bytes, seconds = trainio_read(work, data, shape + [
            "reader.access=sample", "reader.read_threads=1", "reader.batch_size=8", "reader.sample_shuffle=off",
            "reader.read_type=memory", "train.epochs=3"])
        ours1.append(sample_bytes / seconds / MIB)
        plain_kept.append(plain_read(data_files(data), per_file, 1, "keep"))
        job = fio(["--name=hot", f"--filename={names}", "--rw=read", "--bs=1m", "--ioengine=psync", "--numjobs=1",
                   f"--size={files * per_file}m", "--file_service_type=sequential", "--invalidate=0", "--iomem=mmap"])
        theirs1.append(job["read"]["bw_bytes"] / MIB)
    table.add("hot cache, access sample, 1 MiB, 1 thread", ours1, theirs1,
              "MiB/s", 0.95)
    table.add("  the same vs the plain reader (a batch's 8 buffers)", ours1,
              plain_kept, "MiB/s", None)
    return data, shape


def bench_hot_read_4k(table, work, gib, repeat):
    """Hot page cache, 4 KiB samples in file order, one reader thread, files kept open, against
    one fio psync job reading the same file in 4 KiB calls: where trainio's own cost per sample
    (timing each read and each sample, the plan's lookup) weighs most. fio times its calls by
    reading the TSC itself where the CPU has an invariant one (its clocksource "cpu"); trainio asks
    the kernel's clock (vDSO clock_gettime), three readings per sample here. A line of its own
    holds trainio against the same fio job timing with the kernel's clock (clocksource
    clock_gettime), which shows what the clock accounts for."""
    samples = gib * 262144
    shape = ["dataset.format=indexed_binary", "dataset.num_files_train=1", f"dataset.num_samples_per_file={samples}",
             "dataset.record_length_bytes=4096"]
    data = generate(work, "hot4k", shape)
    name = data_files(data)[0]
    subprocess.run(["cat", name], stdout=subprocess.DEVNULL, check=True)  # warm the cache
    ours, theirs, theirs_kernel_clock = [], [], []
    for _ in range(repeat):
        n, _, seconds = trainio_read(work, data, shape + [
            "reader.access=sample", "reader.read_threads=1", "reader.batch_size=64", "reader.sample_shuffle=off",
            "reader.read_type=memory", "train.epochs=2"])
        ours.append(n / seconds)
        for clock, rates in (([], theirs), (["--clocksource=clock_gettime"], theirs_kernel_clock)):
            job = fio(["--name=hot4k", f"--filename={name}", "--rw=read", "--bs=4k", "--ioengine=psync",
                       f"--size={samples * 4}k", "--invalidate=0", "--iomem=mmap", "--loops=2", *clock])
            rates.append(job["read"]["iops"])
    table.add("hot cache, access sample, 4 KiB, 1 thread", ours, theirs,
              "reads/s", 0.95)
    table.add("  the same vs fio timing with the kernel's clock, as trainio", ours,
              theirs_kernel_clock, "reads/s", None)


def alternate(repeat, *sides):
    """Runs `repeat` rounds of every side, the order rotating by one each round: this machine's
    virtual disk reads and writes faster for a while after a quiet spell and reads a file faster
    while its writing is recent, which favours whichever side goes first."""
    for round in range(repeat):
        first = round % len(sides)
        for side in sides[first:] + sides[:first]:
            side()


def bench_direct_read(table, work, data, shape, repeat):
    """O_DIRECT, 1 MiB samples in file order, files kept open: one reader thread against one fio
    psync job, then two threads against two jobs, each its half of the files. trainio's threads
    share the files batch by batch instead, as PyTorch's workers do, which fio's jobs cannot: with
    2 threads the like-for-like reference is the plain reader doing that with O_DIRECT (mode
    "direct"), and fio's line is informative. Sides alternate (alternate())."""
    files = data_files(data)
    total_mib = sum(os.path.getsize(f) for f in files) // MIB
    half = len(files) // 2
    per_file = total_mib // len(files)
    for threads in (1, 2):
        ours, theirs, plain = [], [], []

        def trainio_side():
            _, sample_bytes, seconds = trainio_read(work, data, shape + [
                "reader.access=sample", "reader.odirect=true", f"reader.read_threads={threads}",
                "reader.read_type=memory", "reader.batch_size=8", "reader.sample_shuffle=off", "train.epochs=1"])
            ours.append(sample_bytes / seconds / MIB)

        def fio_side():
            common = ["--rw=read", "--bs=1m", "--ioengine=psync", "--direct=1", "--iomem=mmap",
                      "--file_service_type=sequential"]
            if threads == 1:
                jobs = ["--name=direct", f"--filename={':'.join(files)}", f"--size={total_mib}m"]
            else:
                jobs = ["--name=first", f"--filename={':'.join(files[:half])}", f"--size={total_mib // 2}m",
                        "--name=second", f"--filename={':'.join(files[half:])}", f"--size={total_mib // 2}m"]
            theirs.append(fio(common + jobs)["read"]["bw_bytes"] / MIB)

        def plain_side():
            plain.append(plain_read(files, per_file, threads, "direct", epochs=1))

        alternate(repeat, trainio_side, fio_side, *([plain_side] if threads == 2 else []))
        table.add(f"O_DIRECT, access sample, 1 MiB, {threads} thread(s)", ours,
                  theirs, "MiB/s", 0.95 if threads == 1 else None)
        if threads == 2:
            table.add("  the same vs the plain reader sharing the files batch by batch", ours, plain, "MiB/s", 0.95)


def bench_random_4k(table, work, gib, repeat):
    """4 KiB samples in random order, O_DIRECT, io_uring at depth 32, one thread, against fio's
    randread with io_uring at iodepth 32, reading as many blocks. Sides alternate (alternate())."""
    samples = gib * 262144
    steps, batch = 600, 256
    shape = ["dataset.format=indexed_binary", "dataset.num_files_train=1", f"dataset.num_samples_per_file={samples}",
             "dataset.record_length_bytes=4096"]
    data = generate(work, "rand4k", shape)
    name = data_files(data)[0]
    ours, theirs = [], []

    def trainio_side():
        n, _, seconds = trainio_read(work, data, shape + [
            "reader.access=sample", "reader.odirect=true", "reader.io_engine=io_uring", "reader.io_depth=32",
            "reader.read_type=memory", "reader.read_threads=1", f"reader.batch_size={batch}",
            "reader.sample_shuffle=seed", f"train.total_training_steps={steps}", "train.epochs=1"])
        ours.append(n / seconds)

    def fio_side():
        job = fio(["--name=rand4k", f"--filename={name}", "--rw=randread", "--bs=4k", "--ioengine=io_uring",
                   "--iodepth=32", "--direct=1", "--iomem=mmap", f"--number_ios={steps * batch}"])
        theirs.append(job["read"]["iops"])

    alternate(repeat, trainio_side, fio_side)
    table.add("4 KiB random, O_DIRECT, io_uring depth 32", ours, theirs,
              "IOPS", 0.90)


def bench_page_cache_probes(table, work, gib, repeat):
    """What the page-cache probes cost where they cost most: hot reads in random order (each read
    far from the last, so one in 64 reads, or one per 16 MiB, is probed with cachestat), one
    thread, files kept open. trainio with probes against trainio with
    TRAINIO_PAGE_CACHE_PROBES=off, alternately."""
    for size, title in ((4096, "4 KiB"), (MIB, "1 MiB")):
        samples = gib * (1 << 30) // size
        shape = ["dataset.format=indexed_binary", "dataset.num_files_train=1",
                 f"dataset.num_samples_per_file={samples}", f"dataset.record_length_bytes={size}"]
        data = generate(work, f"probe{size}", shape)
        subprocess.run(["cat"] + data_files(data), stdout=subprocess.DEVNULL, check=True)  # warm the cache
        reading = shape + ["reader.access=sample", "reader.read_type=memory", "reader.read_threads=1",
                           "reader.batch_size=64", "reader.sample_shuffle=seed", "train.epochs=1"]
        ours, theirs = [], []
        for _ in range(repeat):
            n, _, seconds = trainio_read(work, data, reading)
            ours.append(n / seconds)
            n, _, seconds = trainio_read(work, data, reading, extra_env={"TRAINIO_PAGE_CACHE_PROBES": "off"})
            theirs.append(n / seconds)
        table.add(f"hot {title} random reads: page-cache probes on / off", ours,
                  theirs, "reads/s", 0.97)


def bench_small_samples(table, work, repeat):
    """Small samples from a hot cache through the framework readers: HDF5 (h5py's calls, 128 KiB
    samples) and TFRecord (TensorFlow's stream, 2,500-byte records), per rank."""
    hdf5 = ["dataset.format=hdf5", "dataset.num_files_train=16", "dataset.num_samples_per_file=256",
            "dataset.record_length_bytes=131072"]
    hdf5_reading = ["reader.read_threads=2", "reader.batch_size=32", "reader.sample_shuffle=seed", "train.epochs=2"]
    tfrecord = ["framework=tensorflow", "reader.data_loader=tensorflow", "dataset.format=tfrecord",
                "dataset.num_files_train=8", "dataset.num_samples_per_file=100000", "dataset.record_length_bytes=2500"]
    tf_reading = ["reader.read_threads=2", "reader.batch_size=1024", "train.epochs=2"]
    cases = [
        ("HDF5 128 KiB, h5py calls, file opened per sample", "hdf5", hdf5, hdf5_reading, 40000),
        ("HDF5 128 KiB, h5py calls, files kept open", "hdf5", hdf5, hdf5_reading + ["reader.read_type=memory"], 40000),
        ("HDF5 128 KiB, access sample", "hdf5", hdf5, hdf5_reading + ["reader.access=sample"], 40000),
        ("TFRecord 2,500 B, tf.data, 2 threads", "tfrecord", tfrecord, tf_reading + ["reader.sample_shuffle=off"],
         1000000),
        ("TFRecord 2,500 B, tf.data, 2 threads, shuffle 1024", "tfrecord", tfrecord,
         tf_reading + ["reader.sample_shuffle=seed", "reader.shuffle_size=1024"], 1000000),
    ]
    for title, name, shape, reading, target in cases:
        data = generate(work, name, shape)
        rates = []
        for _ in range(repeat):
            n, _, seconds = trainio_read(work, data, shape + reading)
            rates.append(n / seconds)
        table.add_absolute(title, statistics.median(rates), "samples/s", target)
    bench_h5py(table, work, repeat)


H5PY_RATE = r"""
import glob, random, sys, time
import h5py
files = sorted(glob.glob(sys.argv[1] + "/train/*.hdf5"))
keep = sys.argv[2] == "memory"
order = [(f, s) for f in files for s in range(256)]
random.seed(1)
random.shuffle(order)
opened = {f: h5py.File(f, "r") for f in files} if keep else {}
start = time.perf_counter()
for f, s in order:
    if keep:
        opened[f]["records_0"][s]
    else:
        with h5py.File(f, "r") as h:
            h["records_0"][s]
print(len(order) / (time.perf_counter() - start))
"""


def bench_h5py(table, work, repeat):
    """h5py itself reading the same HDF5 samples in one Python thread, for scale: trainio replays
    h5py's calls through the same libhdf5, whose per-call CPU cost (H5Fopen sets up a metadata
    cache of about a megabyte) bounds both."""
    python = "/usr/bin/python3"
    if subprocess.run([python, "-c", "import h5py"], capture_output=True).returncode != 0:
        print("  (h5py is not installed: no h5py reference)")
        return
    data = os.path.join(work, "hdf5")
    shape = ["dataset.format=hdf5", "dataset.num_files_train=16", "dataset.num_samples_per_file=256",
             "dataset.record_length_bytes=131072"]
    for read_type, what in (("on_demand", "file opened per sample"), ("memory", "files kept open")):
        ours, theirs = [], []
        for _ in range(repeat):
            n, _, seconds = trainio_read(work, data, shape + [
                "reader.read_threads=1", "reader.batch_size=32", "reader.sample_shuffle=seed", "train.epochs=1",
                f"reader.read_type={read_type}"])
            ours.append(n / seconds)
            theirs.append(float(run([python, "-c", H5PY_RATE, data, read_type]).stdout))
        table.add(f"HDF5 128 KiB, 1 thread, {what}, vs h5py", ours, theirs,
                  "samples/s", None)


def bench_hdf5_threads(table, work, repeat):
    """HDF5 128 KiB samples (h5py's calls) at 1, 2 and 4 reader threads, files opened per sample
    and kept open, from a hot page cache and with the cache emptied before each epoch
    (reader.evict=fadvise): samples/s, and the ratio to 1 thread in the "reference" column. NPZ
    samples of the same size (numpy's calls, opened per sample) for comparison: its readers never
    shared a lock. The ratio shows whether reader threads read concurrently."""
    shapes = {
        "hdf5": ["dataset.format=hdf5", "dataset.num_files_train=16", "dataset.num_samples_per_file=256",
                 "dataset.record_length_bytes=131072"],
        "npz": ["dataset.format=npz", "dataset.num_files_train=4096", "dataset.num_samples_per_file=1",
                "dataset.record_length_bytes=131072"],
    }
    cases = [("HDF5", "hdf5", ["reader.read_type=on_demand"], "opened per sample"),
             ("HDF5", "hdf5", ["reader.read_type=memory"], "kept open"),
             ("NPZ", "npz", ["reader.read_type=on_demand"], "opened per sample")]
    # Hot runs read 4 epochs: one epoch from memory takes well under a second.
    for cache, evict in (("hot cache", ["train.epochs=4"]), ("cache emptied", ["reader.evict=fadvise", "train.epochs=1"])):
        for fmt, name, reading, what in cases:
            data = generate(work, name, shapes[name])
            one = None
            for threads in (1, 2, 4):
                rates = []
                for _ in range(repeat):
                    n, _, seconds = trainio_read(work, data, shapes[name] + reading + evict + [
                        f"reader.read_threads={threads}", "reader.batch_size=32", "reader.sample_shuffle=seed"])
                    rates.append(n / seconds)
                rate = statistics.median(rates)
                one = one or rate
                table.add(f"{fmt} 128 KiB, {what}, {cache}, {threads} thread(s) vs 1", rate, one, "samples/s", None)


def bench_checkpoint(table, work, gib, repeat):
    """Checkpoint saves (fsync on, as MLPerf requires) and loads after the page cache is emptied:
    2 ranks each writing one file of `gib` GiB, then reading it back. The reference does what one
    checkpoint does: fio with 2 jobs each writing one new file of the same size in 64 MiB calls
    and fsyncing it at the end (end_fsync, whose time fio's bandwidth includes), then reading it
    back after dropping it from the cache. Like for like: no preallocation (fallocate=none;
    torch.save creates its file by writing it, where fio by default fallocates before its clock
    starts), and each round runs both sides from the same state (earlier files deleted, synced,
    settled) in alternating order, because this machine's virtual disk runs faster for a while
    after a quiet spell, which favoured whichever side went first (fio 1.1 GiB/s right after a
    trainio save, both 0.6-0.7 GiB/s when each starts alike). The earlier reference used
    fsync_on_close, whose fsync fio makes after it stops its clock (fio issue #831): its
    bandwidth left the fsync out and overstated the disk."""
    size = gib * 1024 * MIB
    folder = os.path.join(work, "ckpt")
    fio_folder = os.path.join(work, "fio-ckpt")
    saves, loads, fio_write, fio_read = [], [], [], []

    def settle():
        clear_and_settle(folder, fio_folder)

    def ours():
        settle()
        out = os.path.join(work, "ckpt-out")
        shutil.rmtree(out, ignore_errors=True)
        trainio(["run", "default", "workflow.train=false", "workflow.checkpoint=true", f"checkpoint.checkpoint_folder={folder}",
                 "checkpoint.num_checkpoints_write=1", "checkpoint.num_checkpoints_read=1", "checkpoint.fsync=true",
                 "checkpoint.time_between_checkpoints=0", "checkpoint.type=all_ranks", f"model.model_size_bytes={size}",
                 "--output", out], 2)
        with open(os.path.join(out, "summary.json")) as f:
            entries = json.load(f)["trainio"]["checkpoint"]["checkpoints"]
        saves.extend(e["bytes_per_second"] / MIB for e in entries if e["kind"] == "save")
        loads.extend(e["bytes_per_second"] / MIB for e in entries if e["kind"] == "load")
        shutil.rmtree(out, ignore_errors=True)

    def theirs():
        settle()
        os.makedirs(fio_folder)
        common = ["--name=ckpt", "--bs=64m", "--ioengine=psync", "--numjobs=2", "--nrfiles=1", f"--filesize={size}",
                  "--iomem=mmap"]
        job = fio(common + ["--rw=write", "--end_fsync=1", "--fallocate=none"], fio_folder)
        fio_write.append(job["write"]["bw_bytes"] / MIB)
        job = fio(common + ["--rw=read", "--invalidate=1"], fio_folder)
        fio_read.append(job["read"]["bw_bytes"] / MIB)

    alternate(repeat, ours, theirs)
    settle()
    table.add(f"checkpoint save, 2 ranks x {gib} GiB, fsync", saves, fio_write,
              "MiB/s", 0.90)
    table.add(f"checkpoint load after eviction, 2 ranks", loads, fio_read,
              "MiB/s", 0.90)


def bench_memory(table, work, data, shape):
    """Peak resident memory of one rank reading 1 MiB samples with 2 threads; and of a plan over
    277 million samples (megatron's dataset), which needs no per-sample memory."""
    out = os.path.join(work, "rss")
    shutil.rmtree(out, ignore_errors=True)
    rss = peak_rss_mib_of([TRAINIO, "run", "default", f"dataset.data_folder={data}", *READ_COMMON, *shape,
                           "reader.access=sample", "reader.read_threads=2", "reader.batch_size=8", "train.epochs=1",
                           "--output", out])
    table.add_absolute("peak RSS, 1 rank, 2 threads x 1 MiB samples", rss, "MiB", 64 + 2, higher_is_better=False)
    shutil.rmtree(out, ignore_errors=True)


def bench_barrier(table, repeat):
    """The per-step synchronisation (Comm::vote, as the training loop calls it) against a plain
    MPI_Barrier and MPI_Ibarrier + MPI_Wait at 4 to 32 ranks on the machine's cores
    (oversubscribed), back to back and after a 3.5 ms emulated compute (cosmoflow on H100); the
    CPU the stepping thread burns per step; and the CPU a rank burns waiting 1 s for another.
    Medians over `repeat` runs of tests/bench/barrier_latency.cpp, which alternates the cases
    block by block."""
    for ranks in (4, 8, 16, 32):
        runs = []
        for _ in range(repeat):
            out = run(["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to", "none", BARRIER_BENCH,
                       "--rounds", "5", "--iterations", "40"])
            line = next(l for l in out.stdout.splitlines() if l.startswith("json: "))
            runs.append(json.loads(line[len("json: "):]))
        for case, what in (("back_to_back", "back to back"), ("compute", "after 3.5 ms compute")):
            ours = statistics.median(r[case]["trainio"]["median_us"] for r in runs)
            theirs = statistics.median(r[case]["mpi_barrier"]["median_us"] for r in runs)
            ratio = statistics.median(r[case]["trainio"]["median_us"] / max(r[case]["mpi_barrier"]["median_us"], 1e-3)
                                      for r in runs)
            cpu = statistics.median(r[case]["trainio"]["cpu_us_per_step"] for r in runs)
            mpi_cpu = statistics.median(r[case]["mpi_barrier"]["cpu_us_per_step"] for r in runs)
            print(f"  barrier, {ranks} ranks, {what}: trainio {ours:.1f} us, MPI_Barrier {theirs:.1f} us per step "
                  f"beyond compute (ratio {ratio:.2f}); CPU per step {cpu:.1f} us against {mpi_cpu:.1f} us", flush=True)
            table.add_absolute(f"step sync latency / MPI_Barrier's, {ranks} ranks, {what}", ratio, "x", 1,
                               higher_is_better=False)
        cpu = statistics.median(r["long_wait"]["trainio_cpu_ms"] for r in runs)
        mpi_cpu = statistics.median(r["long_wait"]["mpi_barrier_cpu_ms"] for r in runs)
        print(f"  barrier, {ranks} ranks, waiting 1 s: CPU trainio {cpu:.1f} ms, MPI_Barrier {mpi_cpu:.1f} ms", flush=True)
        table.add_absolute(f"CPU of a rank waiting 1 s in the barrier, {ranks} ranks", cpu, "ms", 100,
                           higher_is_better=False)


BOTO3_SIDE = """
import json, sys, time, boto3, botocore.auth
from botocore.config import Config
endpoint, bucket, prefix, objects, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
# The same work as trainio's client (and the CRT's): bodies sent as UNSIGNED-PAYLOAD. botocore
# would otherwise hash every body with SHA-256 over http.
botocore.auth.S3SigV4Auth._should_sha256_sign_payload = lambda self, request: False
s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="S3RVER", aws_secret_access_key="S3RVER",
                  region_name="us-east-1", config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
body, out = b"x" * size, {}
for phase in ("put", "get"):
    times = []
    t0 = time.perf_counter()
    for i in range(objects):
        t = time.perf_counter()
        if phase == "put":
            s3.put_object(Bucket=bucket, Key=prefix + str(i), Body=body)
        else:
            s3.get_object(Bucket=bucket, Key=prefix + str(i))["Body"].read()
        times.append((time.perf_counter() - t) * 1e3)
    seconds = time.perf_counter() - t0
    times.sort()
    out[phase] = {"mib_per_s": size * objects / seconds / 2**20, "p50_ms": times[len(times) // 2],
                  "p99_ms": times[min(len(times) - 1, int(0.99 * (len(times) - 1) + 0.5))]}
print("json: " + json.dumps(out))
"""


def bench_s3(table, work, repeat):
    """trainio's S3 client against boto3, on one s3rver on loopback, alternating: PUT then GET of
    the same objects, one request at a time on one connection each (tests/bench/s3_requests.cpp
    and BOTO3_SIDE do exactly the same work). s3rver, a Node.js server writing to local disk, sets
    the pace; the ratio shows what each client adds to it."""
    tools = os.path.join(ROOT, "build", "test-tools")
    s3rver = os.path.join(tools, "node_modules", ".bin", "s3rver")
    if not os.path.exists(s3rver):
        run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", tools, "s3rver@3.7.1"])
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = subprocess.Popen([s3rver, "-d", os.path.join(work, "s3"), "-a", "127.0.0.1", "-p", str(port),
                               "--configure-bucket", "bench", "--silent"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{port}"
        for size, objects in ((64 * 1024, 200), (8 * MIB, 20)):
            results = {"trainio": [], "boto3": []}
            for r in range(repeat):
                for side in ("trainio", "boto3"):
                    prefix = f"{side}-{size}-{r}/"
                    args = [endpoint, "bench", prefix, str(objects), str(size)]
                    cmd = [S3_BENCH] + args if side == "trainio" else ["/usr/bin/python3", "-c", BOTO3_SIDE] + args
                    line = next(l for l in run(cmd).stdout.splitlines() if l.startswith("json: "))
                    results[side].append(json.loads(line[len("json: "):]))
            label = f"{size // 1024} KiB" if size < MIB else f"{size // MIB} MiB"
            for phase in ("put", "get"):
                med = lambda side, key: statistics.median(x[phase][key] for x in results[side])
                table.add(f"S3 {phase.upper()} {label} objects (s3rver), throughput", med("trainio", "mib_per_s"),
                          med("boto3", "mib_per_s"), "MiB/s", None)
                print(f"  S3 {phase.upper()} {label}: latency p50 trainio {med('trainio', 'p50_ms'):.2f} ms, "
                      f"boto3 {med('boto3', 'p50_ms'):.2f} ms; p99 {med('trainio', 'p99_ms'):.2f} / "
                      f"{med('boto3', 'p99_ms'):.2f} ms", flush=True)
    finally:
        server.terminate()
        server.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default=None, help="where to put the files (default: a scratch folder under /tmp)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each side per case (median taken)")
    p.add_argument("--quick", action="store_true", help="smaller sizes, one repeat")
    p.add_argument("--only", choices=["hdf5-threads", "validate", "mallocs", "generate", "hot", "direct", "checkpoint", "s3",
                                       "parquet", "checkpoint-matrix"],
                   help="run one group of cases")  # the table in main() maps each to its function
    p.add_argument("--checkpoint-matrix", action="store_true",
                   help="only the checkpoint write-strategy matrix against fio (= --only checkpoint-matrix)")
    p.add_argument("--barrier-only", action="store_true", help="only the per-step barrier against MPI_Barrier")
    p.add_argument("--probes-only", action="store_true", help="only the cost of the page-cache probes")
    args = p.parse_args()
    if args.checkpoint_matrix:
        args.only = "checkpoint-matrix"
    if not args.only and not os.path.exists(BARRIER_BENCH):
        sys.exit(f"build the benchmarks first: scripts/bench.sh builds them ({BARRIER_BENCH} is missing)")
    if args.barrier_only:
        table = Table()
        bench_barrier(table, 1 if args.quick else args.repeat)
        table.print()
        return
    if not os.path.exists(TRAINIO):
        sys.exit(f"build trainio first ({TRAINIO} is missing)")
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install fio)")
    work = tempfile.mkdtemp(prefix="trainio-bench-", dir=args.dir)
    repeat = 1 if args.quick else args.repeat
    scale = 1 if args.quick else 4
    table = Table()
    try:
        print(f"benchmark files in {work}; {repeat} run(s) per side per case")
        only = {"hdf5-threads": lambda: bench_hdf5_threads(table, work, repeat),
                "generate": lambda: ([bench_generate(table, work, 2, 4 * scale, 64, repeat, f) for f in ("npz", "npy")],
                                     bench_generate_plain(table, work, repeat)),
                "hot": lambda: (bench_hot_read(table, work, scale, repeat), bench_hot_read_4k(table, work, 1, repeat)),
                "direct": lambda: (bench_direct_read(table, work, *hot_data(work, scale)[:2], repeat),
                                   bench_random_4k(table, work, scale, repeat)),
                "mallocs": lambda: bench_mallocs(table, work),
                "validate": lambda: bench_validate(table, work, repeat),
                "checkpoint": lambda: bench_checkpoint(table, work, 1 if args.quick else 4, repeat),
                "s3": lambda: bench_s3(table, work, repeat),
                "parquet": lambda: parquet_cases.bench_parquet(table, work, repeat),
                "checkpoint-matrix": lambda: checkpoint_matrix.bench_checkpoint_matrix(table, work, repeat)}
        if args.only:
            only[args.only]()
            table.print()
            return
        if args.probes_only:
            bench_page_cache_probes(table, work, scale, repeat)
            table.print()
            return
        for fmt in ("npz", "npy"):
            bench_generate(table, work, 2, 4 * scale, 64, repeat, fmt)
        bench_generate_plain(table, work, repeat)
        data, shape = bench_hot_read(table, work, scale, repeat)
        bench_hot_read_4k(table, work, 1, repeat)
        bench_direct_read(table, work, data, shape, repeat)
        bench_memory(table, work, data, shape)
        bench_random_4k(table, work, scale, repeat)
        bench_page_cache_probes(table, work, scale, repeat)
        bench_small_samples(table, work, repeat)
        bench_validate(table, work, repeat)
        bench_mallocs(table, work)
        bench_hdf5_threads(table, work, repeat)
        bench_checkpoint(table, work, scale, repeat)
        checkpoint_matrix.bench_checkpoint_matrix(table, work, repeat)
        bench_barrier(table, repeat)
        parquet_cases.bench_parquet(table, work, repeat)
        table.print()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    import checkpoint_matrix  # noqa: E402 (it imports this module's helpers)
    import parquet_cases  # noqa: E402 (it imports this module's helpers)
    main()
