#!/usr/bin/env python3
"""trainio against fio on the same machine, same files, same run: prints figures and ratios.

Not a test: it measures, it does not judge (the "target" column states the goal from the issue
that set it). Each case runs trainio and fio alternately `--repeat` times and compares medians,
because a shared machine is noisy in absolute numbers but steadier in ratios.
"""
import argparse
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
TRAINIO = os.path.join(ROOT, "build", "trainio")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_mpi_yield_when_idle": "1"}
MIB = 1 << 20


def run(cmd, **kw):
    env = dict(os.environ, **MPI_ENV)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    return proc


def sync_and_settle():
    subprocess.run(["sync"])
    time.sleep(1)


def drop_caches():
    """Machine-wide page-cache drop (root only); returns whether it worked."""
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def fio(args, directory):
    out = run(["fio", "--output-format=json", f"--directory={directory}", "--group_reporting"] + args)
    job = json.loads(out.stdout)["jobs"][0]
    return job


def trainio(args, ranks):
    cmd = [TRAINIO] + args
    if ranks > 1:
        cmd = ["mpirun", "-np", str(ranks), "--oversubscribe"] + cmd
    start = time.monotonic()
    out = run(cmd)
    return out, time.monotonic() - start


def reported_rate(text):
    """The rate trainio prints at the end of a phase, "(1.23 GiB/s)", in MiB/s: its own timing
    of the phase, without process and MPI start-up (fio's figures leave those out too)."""
    m = re.search(r"\(([\d.]+) (B|KiB|MiB|GiB|TiB)/s\)", text)
    if not m:
        sys.exit(f"no rate in trainio's output:\n{text}")
    scale = {"B": 1 / MIB, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024, "TiB": 1024 * 1024}[m.group(2)]
    return float(m.group(1)) * scale


class Table:
    def __init__(self):
        self.rows = []

    def add(self, case, ours, theirs, unit, target):
        ratio = ours / theirs if theirs else float("nan")
        verdict = "" if target is None else ("meets" if ratio >= target else "BELOW")
        self.rows.append((case, f"{ours:,.1f} {unit}", f"{theirs:,.1f} {unit}", f"{ratio:.2f}",
                          "" if target is None else f">= {target:.2f}", verdict))
        print(f"  {case}: trainio {ours:,.1f} {unit}, fio {theirs:,.1f} {unit}, ratio {ratio:.2f}", flush=True)

    def print(self):
        header = ("case", "trainio", "fio", "ratio", "target", "")
        widths = [max(len(str(r[i])) for r in self.rows + [header]) for i in range(6)]
        line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
        print()
        print(line(header))
        print(line(["-" * w for w in widths]))
        for r in self.rows:
            print(line(r))


def bench_generate(table, work, ranks, files_per_rank, size_mib, repeat, fmt):
    """Dataset generation (buffered writes) against fio sequential buffered writes of the same
    number and size of files, with as many fio jobs as ranks."""
    files = files_per_rank * ranks
    record = size_mib * MIB
    ours, theirs = [], []
    for _ in range(repeat):
        d = os.path.join(work, "gen")
        shutil.rmtree(d, ignore_errors=True)
        sync_and_settle()
        out, _ = trainio(["generate", "default", f"dataset.format={fmt}", f"dataset.data_folder={d}",
                          f"dataset.num_files_train={files}", "dataset.num_files_eval=0", "workflow.evaluation=false",
                          f"dataset.record_length_bytes={record}", "dataset.num_subfolders_train=0",
                          "--no-progress"], ranks)
        ours.append(reported_rate(out.stdout))
        shutil.rmtree(d, ignore_errors=True)
        f = os.path.join(work, "fio")
        shutil.rmtree(f, ignore_errors=True)
        os.makedirs(f)
        sync_and_settle()
        job = fio(["--name=write", "--rw=write", "--bs=4m", "--ioengine=psync", f"--numjobs={ranks}",
                   f"--nrfiles={files_per_rank}", f"--filesize={size_mib}m", "--file_service_type=sequential",
                   "--create_on_open=1"], f)
        theirs.append(job["write"]["bw_bytes"] / MIB)
        shutil.rmtree(f, ignore_errors=True)
    table.add(f"generate {fmt}, {ranks} ranks x {files_per_rank} files x {size_mib} MiB", statistics.median(ours),
              statistics.median(theirs), "MiB/s", 0.70)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default=None, help="where to put the files (default: a scratch folder under /tmp)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each side per case (median taken)")
    p.add_argument("--quick", action="store_true", help="smaller sizes, one repeat")
    args = p.parse_args()
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
        for fmt in ("npz", "npy"):
            bench_generate(table, work, 2, 4 * scale, 64, repeat, fmt)
        table.print()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
