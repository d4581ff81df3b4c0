"""A run stopped by Ctrl-C (SIGINT) or SIGTERM (a Slurm time limit; mpirun ending a job) keeps what
it measured: every rank stops after the same step, the results of what ran are written and marked
incomplete, no temporary file is left, and the exit code says which signal (130, 143)."""
import json
import os
import signal
import subprocess
import time

from harness import TrainioTest, TRAINIO, MPI_ENV

LONG = ["run", "default", "dataset.data_folder=data", "dataset.num_files_train=16", "dataset.num_files_eval=4",
        "dataset.record_length_bytes=4096", "reader.batch_size=2", "train.epochs=500", "train.computation_time=0.02",
        "evaluation.eval_time=0.005", "workflow.generate_data=true", "--no-progress", "--output", "o",
        "--live-json", "live.jsonl", "--live-interval", "0.1"]


class StopTest(TrainioTest):
    def interrupted(self, sig, ranks=None, group=False):
        """Starts a long run, lets it train for a while, sends `sig` (to the whole process group
        when `group`, as a terminal's Ctrl-C does) and returns (exit code, stdout, stderr)."""
        cmd = [TRAINIO, *LONG]
        if ranks:
            # mpirun relays the signal to the ranks as SIGTERM and kills what is left this many seconds
            # later (by default 1: too short to write results; docs/usage.md says to raise it).
            cmd = ["mpirun", "-np", str(ranks), "--mca", "odls_base_sigkill_timeout", "10"] + cmd
        proc = subprocess.Popen(cmd, cwd=self.dir, env=dict(os.environ, **MPI_ENV), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.trained_an_epoch():
            time.sleep(0.1)
        self.assertTrue(self.trained_an_epoch(), "the run did not get to its second epoch")
        os.killpg(proc.pid, sig) if group else proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        return proc.returncode, out, err

    def trained_an_epoch(self):
        try:
            with open(self.path("live.jsonl")) as f:
                labels = [json.loads(line).get("label", "") for line in f if line.strip()]
            return any(label.startswith("epoch ") and int(label.split()[1].split("/")[0]) >= 2 for label in labels)
        except (FileNotFoundError, json.JSONDecodeError):
            return False

    def check_kept(self, code, out, err, sig, ranks=1):
        self.assertEqual(code, 128 + sig, f"{out}\n{err}")
        s = self.summary("o")
        name = "SIGINT" if sig == signal.SIGINT else "SIGTERM"
        self.assertFalse(s["trainio"]["complete"])
        self.assertEqual(s["trainio"]["stopped"]["reason"], name)
        epochs = s["trainio"]["epochs"]
        self.assertGreaterEqual(len(epochs), 1)
        self.assertLess(len(epochs), 500)
        # It stopped in the last epoch listed (after one of its steps), or just before the next one.
        self.assertIn(s["trainio"]["stopped"]["epoch"], (epochs[-1]["epoch"], epochs[-1]["epoch"] + 1))
        self.assertEqual(s["num_accelerators"], ranks)
        self.assertIn("INCOMPLETE", out)
        self.assertIn(f"{name} stopped the run", self.read_text("o", "dlio.log"))
        with open(self.path("live.jsonl")) as f:
            last = json.loads(f.read().splitlines()[-1])
        self.assertTrue(last["final"])
        self.assertFalse(last["complete"])
        self.assertIn(name, last["stopped"])
        self.assertFalse([n for n in os.listdir(self.path("o")) if n.endswith(".trainio-tmp")])
        for rank in range(ranks):
            self.assertTrue(os.path.exists(self.path("o", f"{rank}_records.jsonl")))
        # What ran is provable like any run's (the harness verifies the folder too).
        r = self.run_trainio("verify", "o")
        self.assertEqual(r.code, 0, r)

    def test_sigint_one_rank(self):
        self.check_kept(*self.interrupted(signal.SIGINT), signal.SIGINT)

    def test_sigterm_one_rank(self):
        self.check_kept(*self.interrupted(signal.SIGTERM), signal.SIGTERM)

    def test_ctrl_c_two_ranks_under_mpirun(self):
        # The terminal sends SIGINT to mpirun and the ranks; mpirun relays it as SIGTERM too.
        code, out, err = self.interrupted(signal.SIGINT, ranks=2, group=True)
        self.assertNotEqual(code, 0)
        s = self.summary("o")
        self.assertFalse(s["trainio"]["complete"], f"{out}\n{err}")
        # The ranks' first signal: the terminal's SIGINT, or mpirun's SIGTERM relaying it when that came first.
        self.assertIn(s["trainio"]["stopped"]["reason"], ("SIGINT", "SIGTERM"))
        self.assertFalse([n for n in os.listdir(self.path("o")) if n.endswith(".trainio-tmp")])

    def test_sigterm_two_ranks_under_mpirun(self):
        code, out, err = self.interrupted(signal.SIGTERM, ranks=2)
        self.assertNotEqual(code, 0, f"{out}\n{err}")
        s = self.summary("o")
        self.assertFalse(s["trainio"]["complete"])
        self.assertEqual(s["trainio"]["stopped"]["reason"], "SIGTERM")
        self.assertFalse([n for n in os.listdir(self.path("o")) if n.endswith(".trainio-tmp")])

    def test_a_stopped_run_removes_its_local_ssd_tier(self):
        # docs/caching.md: the tier's folder and its copies (a half-filled one included) go with the run.
        os.makedirs(self.path("ssd"))
        tier = ["cache.tier=local_ssd", "cache.path=ssd", "cache.capacity=64MiB"]
        proc = subprocess.Popen([TRAINIO, *LONG, *tier], cwd=self.dir, env=dict(os.environ, **MPI_ENV),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.trained_an_epoch():
            time.sleep(0.1)
        self.assertTrue([n for n in os.listdir(self.path("ssd")) if n.startswith("trainio-tier.")], "no tier was made")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 143, f"{out}\n{err}")
        self.assertFalse(self.summary("o")["trainio"]["complete"])
        self.assertEqual(os.listdir(self.path("ssd")), [])

    def test_a_run_killed_outright_leaves_temporaries_that_the_next_run_clears(self):
        proc = subprocess.Popen([TRAINIO, *LONG], cwd=self.dir, env=dict(os.environ, **MPI_ENV), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.trained_an_epoch():
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)  # no chance to clean up: temporaries stay
        proc.communicate(timeout=60)
        self.assertTrue([n for n in os.listdir(self.path("o")) if n.endswith(".trainio-tmp")])
        os.remove(self.path("live.jsonl"))
        r = self.run_trainio(*[a if a != "train.epochs=500" else "train.epochs=1" for a in LONG])
        self.assertEqual(r.code, 0, r)
        self.assertFalse([n for n in os.listdir(self.path("o")) if n.endswith(".trainio-tmp")])

    def test_a_stopped_generation_keeps_whole_files_and_resumes(self):
        args = ["generate", "default", "dataset.data_folder=gen", "dataset.num_files_train=20000", "dataset.num_files_eval=0",
                "dataset.record_length_bytes=1024", "workflow.evaluation=false", "--no-progress"]
        proc = subprocess.Popen([TRAINIO, *args], cwd=self.dir, env=dict(os.environ, **MPI_ENV), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, f"{out}\n{err}")
        self.assertIn("SIGINT stopped the generation", err)
        r = self.run_trainio("validate", *args[1:])
        self.assertNotEqual(r.code, 0)  # not marked complete
        r = self.run_trainio(*args)
        self.assertEqual(r.code, 0, r)
        self.assertIn("kept", r.out)

    def test_report_and_compare_know_an_incomplete_run(self):
        code, out, err = self.interrupted(signal.SIGTERM)
        self.assertEqual(code, 143, f"{out}\n{err}")
        short = [a if a != "train.epochs=500" else "train.epochs=2" for a in LONG if a not in ("--live-json", "live.jsonl", "--live-interval", "0.1")]
        for name in ("c1", "c2"):
            self.ok(*[a if a != "o" else f"set/{name}" for a in short])
        os.rename(self.path("o"), self.path("set", "o"))
        self.unverified.add("set/o")  # verified above, where it was made
        r = self.run_trainio("report", "set")
        self.assertEqual(r.code, 0, r)
        self.assertRegex(r.out, r"run \S*set/o is incomplete: SIGTERM stopped it in epoch \d+")
        r = self.run_trainio("compare", "set/c1", "set")
        self.assertIn("left out, incomplete:", r.out)
        self.assertIn("SIGTERM stopped it", r.out)
        os.makedirs(self.path("only"))
        os.rename(self.path("set", "o"), self.path("only", "o"))
        self.unverified |= {"only/o", "set/aggregate.json"}  # the aggregate names the run where it was
        r = self.run_trainio("compare", "set/c1", "only")
        self.assertEqual(r.code, 2, r)
        self.assertIn("holds no complete run", r.err)

    def test_the_same_signal_again_ends_at_once(self):
        # A step of 30 s: the first SIGINT waits for its end; the second, 1.5 s later, does not.
        args = [a if a != "train.computation_time=0.02" else "train.computation_time=30" for a in LONG]
        proc = subprocess.Popen([TRAINIO, *args], cwd=self.dir, env=dict(os.environ, **MPI_ENV), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # into the first step's compute
            if os.path.exists(self.path("live.jsonl")) and "epoch 1/" in self.read_text("live.jsonl"):
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)  # within a second: a launcher's repeat, not taken as a second
        time.sleep(1.5)
        self.assertIsNone(proc.poll(), "a repeat within a second ended the run")
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, -signal.SIGINT)  # ended by the signal itself, at once
        self.assertLess(time.monotonic() - start, 10)
        self.assertFalse(os.path.exists(self.path("o", "summary.json")))
