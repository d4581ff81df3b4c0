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


URING_FAULTS = os.environ.get("TRAINIO_URING_FAULTS",
                              os.path.join(os.path.dirname(__file__), "../../build/tests/libtrainio_uring_faults.so"))
URING = ["reader.access=sample", "reader.io_engine=io_uring"]


@unittest.skipUnless(os.path.exists(URING_FAULTS), f"the io_uring fault-injection library is not built ({URING_FAULTS})")
class IoUringWaitTest(TrainioTest):
    """io_uring's waits are bounded: a submission the kernel refuses is not counted as in flight
    (the wait for it would never end), and a wait on a device that does not complete is watched."""

    def setUp(self):
        super().setUp()
        self.ok("generate", "default", "dataset.data_folder=d", *SHAPE)

    def run_uring(self, faults, stall_timeout, timeout=60):
        return self.run_trainio("run", "default", "dataset.data_folder=d", *SHAPE, *URING, "--stall-timeout",
                                stall_timeout, "--output", "o", env={"LD_PRELOAD": URING_FAULTS, **faults},
                                timeout=timeout)

    def test_a_refused_submission_is_handed_over_again_and_every_sample_is_read(self):
        r = self.run_uring({"TRAINIO_FAULT_URING_REFUSE": "1"}, "0")
        self.assertEqual(r.code, 0, r)
        train = self.summary("o")["trainio"]["epochs"][0]["train"]
        self.assertEqual(train["samples"], 8)
        self.assertGreater(train["bytes_read"], 0)
        self.assertEqual(train["bytes_read"], train["sample_bytes"])  # every sample whole

    def test_a_kernel_that_keeps_refusing_ends_the_run_with_the_reason(self):
        r = self.run_uring({"TRAINIO_FAULT_URING_REFUSE": "all"}, "0")
        self.assertEqual(r.code, 1, r)
        self.assertLess(r.seconds, 30, r)
        self.assertRegex(r.err, r"io_uring refused to take the read of '[^']*img_\d+_of_8.npz'")
        self.assertIn("Resource temporarily unavailable", r.err)
        self.assertIn("reader.io_engine=posix", r.err)
        self.assertFalse(os.path.exists(self.path("o", "summary.json")))

    def test_a_submission_that_fails_outright_ends_the_run_at_once(self):
        r = self.run_uring({"TRAINIO_FAULT_URING_REFUSE": "1", "TRAINIO_FAULT_URING_ERRNO": "22"}, "0")
        self.assertEqual(r.code, 1, r)
        self.assertLess(r.seconds, 30, r)
        self.assertIn("Invalid argument", r.err)
        self.assertRegex(r.err, r"io_uring_submit_and_get_events .*img_\d+_of_8.npz")

    def test_a_wait_on_a_device_that_does_not_complete_is_watched(self):
        r = self.run_uring({"TRAINIO_FAULT_URING_FREEZE": "120"}, "2", timeout=100)
        self.assertEqual(r.code, 1, r)
        self.assertLess(r.seconds, 30, r)
        self.assertRegex(r.err, r"I/O error \(rank 0\): read\('[^']*img_\d+_of_8.npz'\) has not returned for [23] s")


@unittest.skipUnless(os.path.exists(SLOW_IO), f"the fault-injection library is not built ({SLOW_IO})")
class NameCallStallTest(TrainioTest):
    """Calls on names (unlink, rename, mkdir) are watched too: a cache tier's fill whose copy
    cannot be put in place, on a metadata server that does not answer, ends the run naming it."""

    def test_a_cache_tier_fill_that_does_not_return_ends_the_run_naming_it(self):
        self.ok("generate", "default", "dataset.data_folder=d", *SHAPE)
        env = {"LD_PRELOAD": SLOW_IO, "TRAINIO_FAULT_SLOW_PATH": "npz.trainio-tmp", "TRAINIO_FAULT_SLOW_NAMES": "1",
               "TRAINIO_FAULT_SLOW_SECONDS": "120"}
        r = self.run_trainio("run", "default", "dataset.data_folder=d", *SHAPE, "reader.data_loader=pytorch",
                             "framework=pytorch", "cache.tier=local_ssd", "cache.path=tier", "cache.capacity=64MiB",
                             "--stall-timeout", "2", "--output", "o", env=env, timeout=100)
        self.assertEqual(r.code, 1, r)
        self.assertLess(r.seconds, 30, r)
        self.assertRegex(r.err, r"(unlink|rename)\('[^']*trainio-tier[^']*npz.trainio-tmp[^']*'\) has not returned for [23] s")

    def test_a_checkpoint_folder_that_cannot_be_made_is_watched_too(self):
        env = {"LD_PRELOAD": SLOW_IO, "TRAINIO_FAULT_SLOW_PATH": "ckpt-stuck", "TRAINIO_FAULT_SLOW_NAMES": "1",
               "TRAINIO_FAULT_SLOW_SECONDS": "120"}
        r = self.run_trainio("run", "default", "dataset.data_folder=d", *SHAPE, "workflow.generate_data=true",
                             "workflow.checkpoint=true", "checkpoint.checkpoint_folder=ckpt-stuck",
                             "--stall-timeout", "2", "--output", "o", env=env, timeout=100)
        self.assertEqual(r.code, 1, r)
        self.assertLess(r.seconds, 30, r)
        self.assertRegex(r.err, r"mkdir\('[^']*ckpt-stuck[^']*'\) has not returned for [23] s")
