"""Shared helpers for the end-to-end tests: run the trainio binary (alone or under mpirun) in a
scratch folder, and read what it wrote."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import jsonschema

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from peak_rss import run_measured  # noqa: E402

TRAINIO = os.environ.get("TRAINIO", os.path.join(os.path.dirname(__file__), "../../build/trainio"))
SOURCE = os.environ.get("TRAINIO_SOURCE", os.path.join(os.path.dirname(__file__), "../.."))
TMP_ROOT = os.environ.get("TRAINIO_TEST_TMP", tempfile.gettempdir())
with open(os.path.join(SOURCE, "docs", "summary.schema.json")) as schema_file:
    SUMMARY_SCHEMA = jsonschema.Draft202012Validator(json.load(schema_file))

MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,vader",
    "OMPI_MCA_mpi_yield_when_idle": "1",
}


def corrupt(path, offset):
    """Flips every bit of one byte of a file in place."""
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0xFF]))


class Result:
    def __init__(self, proc, seconds):
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.seconds = seconds

    def __repr__(self):
        return f"exit {self.code}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


class TrainioTest(unittest.TestCase):
    """Each test gets its own scratch folder as working directory."""

    def setUp(self):
        os.makedirs(TMP_ROOT, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix=f"e2e-{self.id().split('.')[-1]}-", dir=TMP_ROOT)
        # A cleanup, not tearDown: cleanups run last-registered first, so what a test mounts in
        # its folder (tmpfs below) is unmounted before the folder goes.
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        # Every run a test makes must prove its figures from its own records (trainio verify).
        self.runs_made = set()
        self.unverified = set()
        self.addCleanup(self.verify_runs)

    def result_folders(self):
        """The folders under the scratch folder that hold a summary.json."""
        return {folder for folder, _, files in os.walk(self.dir) if "summary.json" in files}

    def verify_runs(self):
        """Runs `trainio verify` on every results folder a trainio command made, but those a test
        changed on purpose afterwards (self.unverified, paths relative to the scratch folder)."""
        skip = {os.path.realpath(self.path(p)) for p in self.unverified}
        # Runs started some other way (a launcher of the test's own) are known by their records.
        with_records = {f for f in self.result_folders() if os.path.exists(os.path.join(f, "0_records.jsonl"))}
        aggregates = {os.path.join(folder, name) for folder, _, files in os.walk(self.dir) for name in files
                      if name.startswith("aggregate") and name.endswith(".json")}
        for folder in sorted(self.runs_made | with_records | aggregates):
            real = os.path.realpath(folder)
            if any(real == s or real.startswith(s + os.sep) for s in skip):
                continue
            if not os.path.isfile(folder) and not os.path.exists(os.path.join(folder, "summary.json")):
                continue
            proc = subprocess.run([TRAINIO, "verify", folder], capture_output=True, text=True, timeout=120)
            mismatches = "\n".join(line for line in proc.stdout.splitlines() if "MISMATCH" in line or "figures" in line)
            self.assertEqual(proc.returncode, 0, f"trainio verify {folder}:\n{mismatches[-6000:]}\n{proc.stderr[-2000:]}")

    def tmpfs(self, name, options):
        """A tmpfs mounted at the scratch folder's `name` with mount `options` ("size=256k") until
        the test ends; skips the test where it cannot be mounted (not root)."""
        mount = self.path(name)
        os.makedirs(mount)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", mount], capture_output=True).returncode != 0:
            self.skipTest(f"cannot mount a tmpfs ({options}) here: needs root")
        self.addCleanup(subprocess.run, ["umount", mount], capture_output=True)
        return mount

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def run_trainio(self, *args, ranks=None, timeout=300, env=None, wrapper=()):
        cmd = list(wrapper) + [TRAINIO] + [str(a) for a in args]
        if ranks is not None:
            cmd = ["mpirun", "-np", str(ranks)] + cmd
        return self.run_command(cmd, timeout=timeout, env=env)

    def run_mpmd(self, *ranks_args, timeout=300):
        """One mpirun of several programs: each argument is (env, args) for one rank, as
        `mpirun -np 1 env K=V trainio ARGS : -np 1 ...` starts them."""
        cmd = ["mpirun"]
        for i, (env, args) in enumerate(ranks_args):
            cmd += ([":"] if i else []) + ["-np", "1", "env", *[f"{k}={v}" for k, v in env.items()], TRAINIO]
            cmd += [str(a) for a in args]
        return self.run_command(cmd, timeout=timeout)

    def run_command(self, cmd, timeout=300, env=None):
        full_env = dict(os.environ, **MPI_ENV)
        full_env.update(env or {})
        before = self.result_folders()
        start = time.monotonic()
        proc = subprocess.run(cmd, cwd=self.dir, env=full_env, capture_output=True, text=True, timeout=timeout)
        seconds = time.monotonic() - start
        self.runs_made |= self.result_folders() - before
        return Result(proc, seconds)

    def peak_rss_mib(self, *args, timeout=300):
        """Runs trainio alone and returns its own peak RSS in MiB (tests/lib/peak_rss.py: measured
        from a small process, not counting this interpreter's memory)."""
        before = self.result_folders()
        code, peak, err = run_measured([TRAINIO, *args], cwd=self.dir, env=dict(os.environ, **MPI_ENV), timeout=timeout)
        self.runs_made |= self.result_folders() - before
        self.assertEqual(code, 0, err)
        return peak

    def ok(self, *args, **kw):
        r = self.run_trainio(*args, **kw)
        self.assertEqual(r.code, 0, r)
        return r

    def summary(self, out_dir):
        """A run's summary.json, checked against docs/summary.schema.json."""
        s = self.read_json(out_dir, "summary.json")
        errors = [f"{'.'.join(map(str, e.path))}: {e.message[:200]}" for e in SUMMARY_SCHEMA.iter_errors(s)]
        self.assertFalse(errors, "summary.json does not follow docs/summary.schema.json:\n" + "\n".join(errors[:10]))
        return s

    def read_text(self, *parts):
        with open(self.path(*parts)) as f:
            return f.read()

    def read_json(self, *parts):
        with open(self.path(*parts)) as f:
            return json.load(f)

    def write_json(self, value, *parts):
        with open(self.path(*parts), "w") as f:
            json.dump(value, f)
