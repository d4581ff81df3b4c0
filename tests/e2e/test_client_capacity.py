"""How many accelerators this client can feed: the run's own estimate (trainio.train.client_capacity)
against what `trainio max-accelerators` measures, on one CPU-bound and one storage-bound setup, and
max-accelerators naming what set its stopping point (docs/metrics.md, "Client capacity")."""
import os
import shutil
import tempfile
import unittest

from harness import TrainioTest

SLOW_IO = os.environ.get("TRAINIO_SLOW_IO", os.path.join(os.path.dirname(__file__), "../../build/tests/libtrainio_slow_io.so"))
COMMON = ["dataset.data_folder=data", "dataset.record_length_bytes_stdev=0", "dataset.num_files_eval=0",
          "workflow.evaluation=False", "train.epochs=1", "metric.au=0.8"]
LAUNCHER = "mpirun -np {ranks} --bind-to none"


class ClientCapacityTest(TrainioTest):
    def search(self, args, ranks_to, **kw):
        self.ok("generate", "default", *args, "--no-progress")
        r = self.run_trainio("max-accelerators", "default", *args, "workflow.generate_data=False", "--ranks-to",
                             str(ranks_to), "--launcher", LAUNCHER, "--output", "search", **kw)
        self.assertEqual(r.code, 0, r)
        doc = self.read_json("search", "max-accelerators.json")
        # The estimate max-accelerators quotes is the largest probe's own, as its summary records it.
        largest = max(doc["probes"], key=lambda p: p["ranks"])
        estimate = self.summary(os.path.join("search", f"ranks={largest['ranks']}"))["trainio"]["train"]["client_capacity"]
        self.assertEqual(doc["client_capacity"], estimate["accelerators"])
        self.assertIn("stopping point set by:", r.out)
        return doc, estimate, r

    @unittest.skipUnless(shutil.which("taskset"), "taskset is not installed")
    def test_cpu_bound_estimate_agrees_with_the_measured_answer(self):
        # One core, 8 MiB per step from the page cache every 5 ms of compute: the client's copies
        # run out of CPU within a few ranks, long before the memory they read from does.
        args = [*COMMON, "dataset.num_files_train=192", "dataset.record_length_bytes=1048576", "reader.batch_size=8",
                "reader.read_threads=2", "train.computation_time=0.005"]
        doc, estimate, _ = self.search(args, 8, wrapper=("taskset", "-c", "0"))
        measured = doc["max_accelerators"]
        self.assertIsNotNone(doc["first_failing"], doc)  # the client ran out before --ranks-to
        self.assertEqual(doc["limited_by"]["by"], "client", doc)
        ev = estimate["evidence"]
        self.assertAlmostEqual(ev["cores"], 1.0, places=6)  # taskset: one CPU, shared by the ranks
        # The margin (docs/metrics.md): within one accelerator of the range from the count beside
        # the other processes' measured CPU use to the count with the core the client's alone.
        low, high = estimate["accelerators_beside_others"], estimate["accelerators"]
        self.assertLessEqual(low - 1, measured, (estimate, doc))
        self.assertLessEqual(measured, high + 1, (estimate, doc))
        # The console prints it beside AU.
        largest = max(p["ranks"] for p in doc["probes"])
        self.assertIn(f"client capacity        {high} accelerators at AU 80%", self.read_text("search", f"ranks={largest}", "summary.txt"))

    @unittest.skipUnless(os.path.exists(SLOW_IO), f"the fault-injection library is not built ({SLOW_IO})")
    def test_storage_bound_answer_is_below_the_estimate_and_named_storage(self):
        # One slow device shared by every rank (each read 4 ms, one at a time): each rank added
        # takes bandwidth from the others; the client's CPU is nowhere near its limit. The data
        # sits in memory (tmpfs) read with O_DIRECT, so the emulated device is the only storage:
        # the machine's own disk, busy with other tests, adds nothing.
        data = tempfile.mkdtemp(prefix="trainio-capacity-", dir="/dev/shm")
        self.addCleanup(shutil.rmtree, data, True)
        env = {"LD_PRELOAD": SLOW_IO, "TRAINIO_FAULT_SLOW_PATH": data + "/",
               "TRAINIO_FAULT_SLOW_SECONDS": "0.004", "TRAINIO_FAULT_SLOW_SERIAL": "1",
               "TRAINIO_FAULT_SLOW_SHARED": self.path("device.lock")}
        args = [*COMMON, f"dataset.data_folder={data}", "dataset.num_files_train=128", "dataset.record_length_bytes=65536",
                "reader.batch_size=2", "reader.read_threads=4", "reader.odirect=true", "train.computation_time=0.05"]
        self.ok("generate", "default", *args, "--no-progress")
        r = self.run_trainio("max-accelerators", "default", *args, "workflow.generate_data=False", "--ranks-to", "8",
                             "--launcher", LAUNCHER, "--output", "search", env=env)
        self.assertEqual(r.code, 0, r)
        doc = self.read_json("search", "max-accelerators.json")
        self.assertIsNotNone(doc["first_failing"], doc)
        self.assertEqual(doc["limited_by"]["by"], "storage", doc)
        self.assertIn("stopping point set by: storage", r.out)
        # The margin: the storage stopped the search below what the client says it could feed.
        self.assertGreaterEqual(doc["max_accelerators"], 1, doc)
        self.assertLess(doc["max_accelerators"], doc["client_capacity"], doc)


class CapacityVerifyTest(TrainioTest):
    def test_verify_recomputes_the_estimate_and_null_without_reads(self):
        self.ok("run", "default", *COMMON, "dataset.num_files_train=16", "dataset.record_length_bytes=65536",
                "reader.batch_size=2", "train.computation_time=0.002", "--no-progress", "--output", "o")
        cap = self.summary("o")["trainio"]["train"]["client_capacity"]
        self.assertIsInstance(cap["accelerators"], int)
        ev = cap["evidence"]
        self.assertAlmostEqual(ev["demand_bytes_per_second"], ev["bytes_read"] / (ev["compute_seconds"] / 0.8), delta=1e-6 * ev["bytes_read"])
        # A changed estimate is caught by verify.
        s = self.read_json("o", "summary.json")
        s["trainio"]["train"]["client_capacity"]["accelerators"] += 5
        self.write_json(s, "o", "summary.json")
        self.unverified.add("o")
        r = self.run_trainio("verify", "o")
        self.assertNotEqual(r.code, 0, r)
        self.assertIn("client_capacity.accelerators", r.out)
        # No reads (synthetic samples): the client's cost per byte is unknown, and the estimate says so.
        self.ok("run", "default", *COMMON, "dataset.format=synthetic", "dataset.num_files_train=16",
                "dataset.record_length_bytes=65536", "reader.batch_size=2", "train.computation_time=0.002", "--no-progress",
                "--output", "z")
        cap = self.summary("z")["trainio"]["train"]["client_capacity"]
        self.assertIsNone(cap["accelerators"])
        self.assertIn("no reads", cap["reason"])
