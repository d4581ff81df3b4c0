#!/usr/bin/env python3
"""How trainio's memory and time grow with steps, files and ranks (issue 11; docs/scaling.md).

Not a test: it measures and prints. Four cases, each a real `trainio run`:
  steps   one rank, N synthetic steps (no storage): peak RSS, run time, time to write the
          results after the last step, and the size of <rank>_output.json;
  files   one rank, F files x S samples per file (synthetic, 10 steps): start-up time, peak RSS,
          and the directory listings the run makes (strace: getdents64 calls);
  ranks   R oversubscribed ranks of a small run: each rank's peak RSS, rank 0 beside the others;
  verify  R ranks x E epochs (an evaluation each): the time, CPU time and peak RSS of `trainio verify`
          of the results folder (issue 31's target: 64 ranks x 1,000 epochs in under 10 s); or of
          folders made before (--results DIR..., read only), and --keep keeps the folders made.
Peak RSS is each process's own (wait4), not the launcher's.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TRAINIO = os.environ.get("TRAINIO", os.path.join(ROOT, "build", "trainio"))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,vader",
           "OMPI_MCA_mpi_yield_when_idle": "1"}
MIB = 1 << 20
SYNTHETIC = ["default", "dataset.format=synthetic", "dataset.num_files_eval=0", "workflow.evaluation=false",
             "train.computation_time=0", "reader.read_threads=1", "--no-progress"]

# Run under mpirun by the ranks case: runs trainio, then prints this rank's peak RSS.
RANK_WRAPPER = r"""
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
print(f"rank {os.environ.get('OMPI_COMM_WORLD_RANK', '0')} rss_kib {usage.ru_maxrss} exit {os.waitstatus_to_exitcode(status)}")
"""


def env():
    return dict(os.environ, **MPI_ENV)


def peak_rss_run(cmd, cpu=None):
    """Runs `cmd`; returns (seconds, peak RSS in MiB of that process, stderr). `cpu`, a list, gets
    the process's user and system CPU seconds."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env())
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    if cpu is not None:
        cpu.extend([usage.ru_utime, usage.ru_stime])
    proc.returncode = 0
    err = proc.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return seconds, usage.ru_maxrss / 1024, err


def case_steps(work, steps):
    out = os.path.join(work, f"steps-{steps}")
    files = max(1, steps // 100)
    cmd = [TRAINIO, "run", *SYNTHETIC, f"dataset.num_files_train={files}", "dataset.num_samples_per_file=100",
           "reader.batch_size=1", "train.epochs=1", f"train.total_training_steps={steps}", "-o", out]
    seconds, rss, _ = peak_rss_run(cmd)
    # Results are written after the run's end (summary.json's "end", local time as DLIO writes it);
    # summary.json is the last file written.
    with open(os.path.join(out, "summary.json")) as f:
        run_end = datetime.datetime.strptime(json.load(f)["end"], "%Y-%m-%dT%H:%M:%S.%f").timestamp()
    summary_written = os.path.getmtime(os.path.join(out, "summary.json"))
    output_bytes = os.path.getsize(os.path.join(out, "0_output.json"))
    print(f"steps  {steps:>11,}  run {seconds:7.1f} s  peak RSS {rss:6.1f} MiB  "
          f"results written in {max(0.0, summary_written - run_end):5.2f} s  "
          f"0_output.json {output_bytes / MIB:8.1f} MiB")
    shutil.rmtree(out, ignore_errors=True)
    return rss


def case_files(work, files, per_file):
    out = os.path.join(work, f"files-{files}")
    cmd = [TRAINIO, "run", *SYNTHETIC, f"dataset.num_files_train={files}", f"dataset.num_samples_per_file={per_file}",
           "reader.batch_size=4", "train.epochs=1", "train.total_training_steps=10",
           "reader.sample_shuffle=seed", "reader.file_shuffle=seed", "-o", out]
    seconds, rss, _ = peak_rss_run(cmd)
    listings = "n/a (no strace)"
    if shutil.which("strace"):
        trace = os.path.join(work, "files.strace")
        subprocess.run(["strace", "-f", "-qq", "-e", "trace=getdents64", "-o", trace, *cmd[:-1], out + "-traced"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env(), check=True)
        with open(trace) as f:
            # /proc and /sys listings are the MPI runtime's and the host facts', not the dataset's.
            calls = [line for line in f if "getdents64" in line]
        listings = f"{len(calls)} getdents64 calls in all"
        shutil.rmtree(out + "-traced", ignore_errors=True)
    print(f"files  {files:>11,} x {per_file} samples  start-up + 10 steps {seconds:5.2f} s  peak RSS {rss:6.1f} MiB  "
          f"directory listings: {listings}")
    shutil.rmtree(out, ignore_errors=True)
    return seconds


def case_ranks(work, ranks):
    out = os.path.join(work, f"ranks-{ranks}")
    cmd = ["mpirun", "-np", str(ranks), "--bind-to", "none", sys.executable, "-c", RANK_WRAPPER, TRAINIO, "run",
           *SYNTHETIC, f"dataset.num_files_train={4 * ranks}", "dataset.num_samples_per_file=100",
           "reader.batch_size=4", "train.epochs=2", "-o", out]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=1800)
    rows = [tuple(map(int, m.groups())) for m in re.finditer(r"rank (\d+) rss_kib (\d+) exit (-?\d+)", proc.stdout)]
    if proc.returncode != 0 or len(rows) != ranks or any(code for _, _, code in rows):
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    rss = {rank: kib / 1024 for rank, kib, _ in rows}
    others = [v for r, v in rss.items() if r != 0]
    result_bytes = sum(os.path.getsize(os.path.join(out, n)) for n in os.listdir(out) if os.path.isfile(os.path.join(out, n)))
    print(f"ranks  {ranks:>11}  peak RSS per rank: max {max(rss.values()):5.1f} MiB, median of others "
          f"{sorted(others)[len(others) // 2]:5.1f} MiB, rank 0 {rss[0]:5.1f} MiB  results {result_bytes / MIB:6.2f} MiB")
    shutil.rmtree(out, ignore_errors=True)
    return rss


def time_verify(out, label):
    """Times `trainio verify` of the results folder `out` (which it only reads)."""
    result_bytes = sum(os.path.getsize(os.path.join(out, n)) for n in os.listdir(out) if os.path.isfile(os.path.join(out, n)))
    cpu = []
    load = os.getloadavg()[0]
    seconds, rss, _ = peak_rss_run([TRAINIO, "verify", out], cpu)
    print(f"verify {label}  (results {result_bytes / MIB:7.1f} MiB)  verify {seconds:6.2f} s  "
          f"CPU {cpu[0]:5.2f} s user + {cpu[1]:4.2f} s sys  peak RSS {rss:6.1f} MiB  (load average before: {load:.1f})")
    return seconds


def case_verify(work, ranks, epochs, keep=False):
    out = os.path.join(work, f"verify-{ranks}x{epochs}")
    cmd = ["mpirun", "-np", str(ranks), "--bind-to", "none", TRAINIO, "run", "default", "dataset.format=synthetic",
           f"dataset.num_files_train={ranks}", f"dataset.num_files_eval={ranks}", "dataset.num_samples_per_file=3",
           "reader.batch_size=1", "reader.batch_size_eval=1", "train.computation_time=0", "evaluation.eval_time=0",
           "reader.read_threads=1", f"train.epochs={epochs}", "--no-progress", "-o", out]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=7200)
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    run_seconds = time.monotonic() - start
    seconds = time_verify(out, f"{ranks:>4} ranks x {epochs:>5} epochs (run {run_seconds:6.1f} s)")
    if not keep:
        shutil.rmtree(out, ignore_errors=True)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, nargs="*", default=[100_000, 2_000_000],
                        help="step counts of the steps case (default: 100,000 and 2,000,000)")
    parser.add_argument("--files", type=int, default=1_000_000, help="files of the files case")
    parser.add_argument("--samples-per-file", type=int, default=100)
    parser.add_argument("--ranks", type=int, nargs="*", default=[8, 32, 64], help="rank counts of the ranks case")
    parser.add_argument("--verify", type=int, nargs=2, action="append", metavar=("RANKS", "EPOCHS"),
                        help="a verify case of RANKS x EPOCHS (repeatable; default 64 1000)")
    parser.add_argument("--results", nargs="+", metavar="DIR",
                        help="time verify of these results folders (made before; only read) instead of making runs")
    parser.add_argument("--keep", action="store_true", help="keep the verify case's results folders (in --work)")
    parser.add_argument("--only", choices=["steps", "files", "ranks", "verify"], help="run one case only")
    parser.add_argument("--work", default=None, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    if args.keep and not args.work:
        parser.error("--keep needs --work (a temporary scratch folder is removed at the end)")
    if args.results:
        args.only = "verify"
    if not os.path.exists(TRAINIO):
        sys.exit(f"no trainio at {TRAINIO}: build it first (scripts/bench.sh)")
    work = args.work or tempfile.mkdtemp(prefix="trainio-scale-")
    os.makedirs(work, exist_ok=True)
    try:
        if args.only in (None, "steps"):
            for steps in args.steps:
                case_steps(work, steps)
        if args.only in (None, "files"):
            case_files(work, args.files, args.samples_per_file)
        if args.only in (None, "ranks"):
            for ranks in args.ranks:
                case_ranks(work, ranks)
        if args.only in (None, "verify") and args.results:
            for folder in args.results:
                time_verify(folder, folder)
        elif args.only in (None, "verify"):
            for ranks, epochs in args.verify or [(64, 1000)]:
                case_verify(work, ranks, epochs, args.keep)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
