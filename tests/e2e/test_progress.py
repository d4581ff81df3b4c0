"""Live progress on a terminal (a pseudo-terminal here): training shows samples/s and the bytes
its reads returned per second from the first second, and a checkpoint that takes a while shows
the bytes it has moved as it goes. Off a terminal, short phases print no progress at all.
--live-json streams the same as a line of JSON per interval."""
import json
import os
import pty
import re
import select
import subprocess
import time

from harness import MPI_ENV, TRAINIO, TrainioTest
from test_checkpoint import TINY
from test_stall import SLOW_IO

# 32 steps of 80 ms: an epoch of about 2.6 s.
EPOCH = ["dataset.num_files_train=8", "dataset.num_samples_per_file=4", "dataset.record_length_bytes=262144",
         "dataset.record_length_bytes_stdev=0", "dataset.num_files_eval=0", "workflow.evaluation=false",
         "reader.batch_size=1", "train.epochs=1", "train.computation_time=0.08"]


class ProgressTest(TrainioTest):
    def run_on_terminal(self, *args, env=None, timeout=120):
        """Runs trainio with standard error on a pseudo-terminal; returns (exit code, what it drew)."""
        master, slave = pty.openpty()
        proc = subprocess.Popen([TRAINIO, *args], cwd=self.dir, env=dict(os.environ, **MPI_ENV, **(env or {})),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        drawn = b""
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([master], [], [], 0.5)
                if ready:
                    try:
                        chunk = os.read(master, 65536)
                    except OSError:  # EIO: the terminal's last writer is gone
                        break
                    if not chunk:
                        break
                    drawn += chunk
                elif proc.poll() is not None:
                    break
            else:
                proc.kill()
                self.fail(f"trainio did not finish within {timeout} s")
        finally:
            os.close(master)
        return proc.wait(), drawn.decode(errors="replace")

    def test_training_shows_samples_and_measured_bytes_per_second_from_the_first_second(self):
        code, drawn = self.run_on_terminal("run", "default", "dataset.data_folder=d", "workflow.generate_data=true",
                                           *EPOCH, "--output", "o")
        self.assertEqual(code, 0, drawn)
        lines = re.findall(r"epoch 1/1: step (\d+)/32 +AU [\d.]+% +([\d.]+) samples/s +read ([\d.]+) (\w+/s)", drawn)
        self.assertTrue(lines, f"no live training line on the terminal:\n{drawn[-2000:]}")
        # The first one comes after about a second (of 2.6): step 12 of 32 or so, not near the end.
        self.assertLess(int(lines[0][0]), 24, lines[0])
        self.assertTrue(any(float(rate) > 0 for _, _, rate, _ in lines), lines)
        self.assertTrue(all(float(samples) > 0 for _, samples, _, _ in lines), lines)
        self.assertIn("\r\033[K", drawn)  # redrawn in place and cleared for the epoch's line

    def test_a_slow_checkpoint_load_shows_the_bytes_it_has_read(self):
        self.ok("run", "default", *TINY, "checkpoint.num_checkpoints_write=1", "--output", "w")
        # Each read of the checkpoint files waits 50 ms, as a slow remote file system's would.
        code, drawn = self.run_on_terminal(
            "run", "default", *TINY, "checkpoint.num_checkpoints_write=0", "checkpoint.num_checkpoints_read=1",
            "checkpoint.evict=none", "--output", "r",
            env={"LD_PRELOAD": SLOW_IO, "TRAINIO_FAULT_SLOW_PATH": "global_epoch1", "TRAINIO_FAULT_SLOW_SECONDS": "0.05"})
        self.assertEqual(code, 0, drawn)
        lines = re.findall(r"checkpoint load 1: ([\d.]+) (\w+) read at ([\d.]+) (\w+/s)", drawn)
        self.assertTrue(lines, f"no live checkpoint line on the terminal:\n{drawn[-2000:]}")
        self.assertTrue(any(float(amount) > 0 for amount, _, _, _ in lines), lines)

    def test_validate_shows_the_bytes_it_has_checked(self):
        self.ok("generate", "default", "dataset.data_folder=d", *EPOCH, "--no-progress")
        # Each read of a data file waits 40 ms: validating 8 files takes a few seconds.
        code, drawn = self.run_on_terminal(
            "validate", "default", "dataset.data_folder=d", *EPOCH,
            env={"LD_PRELOAD": SLOW_IO, "TRAINIO_FAULT_SLOW_PATH": "img_", "TRAINIO_FAULT_SLOW_SECONDS": "0.04"})
        self.assertEqual(code, 0, drawn)
        lines = re.findall(r"validate: +\d+% +(\d+)/8 files +([\d.]+) (\w+)", drawn)
        self.assertTrue(lines, f"no live validate line on the terminal:\n{drawn[-2000:]}")
        self.assertTrue(any(int(files) > 0 and float(amount) > 0 for files, amount, _ in lines), lines)

    def test_short_phases_print_no_progress_off_a_terminal(self):
        r = self.ok("run", "default", "dataset.data_folder=d", "workflow.generate_data=true", *EPOCH, "--output", "o")
        self.assertNotIn("step ", r.err)
        self.assertIn("epoch 1/1: 32 steps", r.out)

    def test_live_json_streams_a_line_per_interval_and_a_final_one(self):
        self.ok("run", "default", "dataset.data_folder=d", "workflow.generate_data=true", *EPOCH, "--no-progress",
                "--live-json", "live.jsonl", "--live-interval", "0.05", "--output", "o")
        lines = [json.loads(line) for line in self.read_text("live.jsonl").splitlines()]
        self.assertGreaterEqual(len(lines), 30, lines)  # 2.6 s of training at 20 lines a second
        self.assertTrue(lines[-1].get("final"))
        self.assertFalse(any(line.get("final") for line in lines[:-1]))
        elapsed = [line["elapsed_seconds"] for line in lines]
        self.assertEqual(elapsed, sorted(elapsed))
        training = [line for line in lines if line["phase"] == "train" and not line["phase_over"]]
        self.assertTrue(training, lines)
        for line in training:
            self.assertEqual((line["label"], line["total"], line["ranks"]), ("epoch 1/1", 32, 1))
            self.assertLessEqual(line["done"], 32)
            if line["done"] == 0:  # before the first step ends nothing is measured yet
                self.assertIsNone(line["rank0"]["au_percent"], line)
                self.assertIsNone(line["samples_per_second"], line)
                continue
            self.assertGreater(line["rank0"]["au_percent"], 0)
            self.assertGreater(line["samples_per_second"], 0)
        dones = [line["done"] for line in training]
        self.assertEqual(dones, sorted(dones))
        self.assertTrue(any(line["rank0"]["read_bytes_per_second"] > 0 for line in training), training)
        total = lines[-1]["rank0"]["read_bytes"]
        self.assertGreaterEqual(total, 32 * 262144)  # every sample was read, and counted
        # The stream never writes over a file: a second run to the same path is refused before it starts.
        r = self.run_trainio("run", "default", "dataset.data_folder=d", *EPOCH, "--live-json", "live.jsonl",
                             "--output", "o2")
        self.assertEqual(r.code, 2, r)
        self.assertIn("--live-json", r.err)
        self.assertFalse(os.path.exists(self.path("o2")))

    def test_a_live_stream_on_a_full_disk_stops_and_the_run_goes_on(self):
        full = self.tmpfs("full", "size=4k")  # a page: about ten lines
        r = self.ok("run", "default", "dataset.data_folder=d", "workflow.generate_data=true", *EPOCH, "--no-progress",
                    "--live-json", os.path.join(full, "live.jsonl"), "--live-interval", "0.05", "--output", "o")
        self.assertIn("--live-json stopped", r.err)
        self.assertIn("No space left on device", r.err)
        self.summary("o")  # the measured run finished and wrote its results
        with open(os.path.join(full, "live.jsonl")) as f:
            lines = f.read().splitlines()
        self.assertGreater(len(lines), 0)
        for line in lines:  # no line cut in half
            json.loads(line)
