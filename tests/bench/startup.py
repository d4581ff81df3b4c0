#!/usr/bin/env python3
"""Start-up to the first checkpoint byte (issue 37 §3): a checkpoint-only read job of a 100 GiB-shaped
plan (llama3_8b, 104.7 GiB of checkpoint), timed from the shell's launch of mpirun to each rank's
first read of checkpoint data, and from each rank's process start (the kernel's) to it.

The checkpoint is laid out by trainio_sparse_checkpoint on a tmpfs: every header, index and file
length as trainio writes them, the tensors' bytes holes (zeros, no memory, no disk). The load reads
all of it (holes cost a copy from the zero page), but only the time to the first byte is the figure.

Both times come from one clock (CLOCK_MONOTONIC): this script reads it just before it starts
mpirun; each rank's records keep its process start (process_start_ns) and the end of its first
checkpoint read (the load line's first_read_end_ns).

Usage: python3 tests/bench/startup.py [--ranks 2,4] [--repeat 3] [--build build] [--workload llama3_8b]
Prints one line per run and the median per rank count."""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,vader"}


def records(folder, rank):
    lines = [json.loads(x) for x in open(os.path.join(folder, f"{rank}_records.jsonl"))]
    start = next(x["process_start_ns"] for x in lines if x["record"] == "end")
    first = next(x["first_read_end_ns"] for x in lines if x["record"] == "checkpoint" and x["kind"] == "load")
    return start, first


def one_run(trainio, workload, ranks, folder, out):
    cmd = ["mpirun", "-np", str(ranks), trainio, "run", workload, "checkpoint.num_checkpoints_write=0",
           "checkpoint.num_checkpoints_read=1", f"checkpoint.checkpoint_folder={folder}",
           "checkpoint.time_between_checkpoints=0", "--output", out, "--no-progress"]
    env = dict(os.environ, **MPI_ENV)
    launch = time.monotonic_ns()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"trainio failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    got = [records(out, r) for r in range(ranks)]
    from_launch = max(first - launch for _, first in got) / 1e9
    from_start = max(first - start for start, first in got) / 1e9
    launch_to_start = min(start for start, _ in got) / 1e9 - launch / 1e9
    return from_launch, from_start, launch_to_start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"))
    ap.add_argument("--workload", default="llama3_8b")
    args = ap.parse_args()
    trainio = os.path.join(args.build, "trainio")
    sparse = os.path.join(args.build, "tests", "bench", "trainio_sparse_checkpoint")
    scratch = tempfile.mkdtemp(prefix="trainio-startup-")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", scratch], capture_output=True).returncode == 0
    try:
        print(f"{args.workload}: mpirun launch to the last rank's first checkpoint byte (process start to it; launch to "
              f"the first process start){'' if mounted else ' [no tmpfs: holes on the scratch folder]'}")
        for ranks in [int(x) for x in args.ranks.split(",")]:
            folder = os.path.join(scratch, f"ckpt{ranks}")
            made = subprocess.run([sparse, args.workload, str(ranks), folder], capture_output=True, text=True, check=True)
            rows = []
            for i in range(args.repeat):
                out = os.path.join(scratch, f"out{ranks}-{i}")
                rows.append(one_run(trainio, args.workload, ranks, folder, out))
                shutil.rmtree(out, ignore_errors=True)
                print(f"  {ranks} ranks run {i + 1}: {rows[-1][0]:.3f} s ({rows[-1][1]:.3f} s; {rows[-1][2]:.3f} s)")
            med = [statistics.median(r[k] for r in rows) for k in range(3)]
            print(f"{ranks} ranks ({made.stdout.strip()}): median {med[0]:.3f} s from mpirun to the first byte "
                  f"({med[1]:.3f} s from process start; {med[2]:.3f} s from mpirun to the first process)")
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        if mounted:
            subprocess.run(["umount", scratch])
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
