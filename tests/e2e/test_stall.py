"""The stall watchdog: a storage call that does not return (a hung mount, injected here by a
preloaded library that makes reads of one file sleep) ends the job with exit 1 and a message
naming the call, the file and the rank, instead of hanging it."""
import os
import time
import unittest

from harness import TrainioTest

SLOW_IO = os.environ.get("TRAINIO_SLOW_IO", os.path.join(os.path.dirname(__file__), "../../build/tests/libtrainio_slow_io.so"))
SHAPE = ["dataset.num_files_train=8", "train.epochs=1", "dataset.num_files_eval=0", "workflow.evaluation=false",
         "dataset.num_subfolders_train=0", "workflow.generate_data=false", "reader.read_threads=2"]


@unittest.skipUnless(os.path.exists(SLOW_IO), f"the fault-injection library is not built ({SLOW_IO})")
class StallWatchdogTest(TrainioTest):
    def setUp(self):
        super().setUp()
        self.ok("generate", "default", "dataset.data_folder=d", *SHAPE)

    def run_stalled(self, ranks=None, timeout_option="2"):
        env = {"LD_PRELOAD": SLOW_IO, "TRAINIO_FAULT_SLOW_PATH": "img_2_of_8", "TRAINIO_FAULT_SLOW_SECONDS": "120"}
        start = time.monotonic()
        r = self.run_trainio("run", "default", "dataset.data_folder=d", *SHAPE, "--stall-timeout", timeout_option,
                             "--output", "o", ranks=ranks, env=env, timeout=100)
        return r, time.monotonic() - start

    def test_a_read_that_does_not_return_ends_the_run_naming_it(self):
        r, seconds = self.run_stalled()
        self.assertEqual(r.code, 1, r)
        self.assertLess(seconds, 30, r)  # 2 s of timeout, not the 120 s the read would take
        self.assertRegex(r.err, r"I/O error \(rank 0\): read\('[^']*img_2_of_8.npz'\) has not returned for [23] s")
        self.assertIn("fix: the file system holding the file may be hung", r.err)
        self.assertIn("has not returned", self.read_text("o", "dlio.log"))
        self.assertFalse(os.path.exists(self.path("o", "summary.json")))

    def test_the_whole_job_ends_under_mpi(self):
        r, seconds = self.run_stalled(ranks=2)
        self.assertNotEqual(r.code, 0, r)
        self.assertLess(seconds, 40, r)
        self.assertIn("img_2_of_8.npz') has not returned", r.err)
        self.assertFalse(os.path.exists(self.path("o", "summary.json")))

    def test_zero_turns_the_watchdog_off(self):
        env = {"LD_PRELOAD": SLOW_IO, "TRAINIO_FAULT_SLOW_PATH": "img_2_of_8", "TRAINIO_FAULT_SLOW_SECONDS": "1"}
        r = self.run_trainio("run", "default", "dataset.data_folder=d", *SHAPE, "--stall-timeout", "0",
                             "--output", "o", env=env, timeout=100)
        self.assertEqual(r.code, 0, r)  # slow reads are not fatal without a watchdog
