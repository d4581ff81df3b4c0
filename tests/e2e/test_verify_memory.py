"""`trainio verify` reads every rank's records epoch by epoch and keeps running totals only, so its
memory does not grow with the run's epochs (issue 31): verifying 4x the epochs of the same run
needs no more than a few MiB more."""
from harness import TrainioTest

RUN = ["default", "dataset.format=synthetic", "dataset.num_files_train=2", "dataset.num_files_eval=2",
       "dataset.num_samples_per_file=3", "reader.batch_size=1", "reader.batch_size_eval=1", "train.computation_time=0",
       "evaluation.eval_time=0", "reader.read_threads=1", "--no-progress"]


class VerifyMemoryTest(TrainioTest):
    def test_peak_memory_does_not_grow_with_epochs(self):
        peaks = {}
        for epochs in (200, 800):
            self.ok("run", *RUN, f"train.epochs={epochs}", "--output", f"e{epochs}", ranks=2, timeout=600)
            r = self.verify_ok(f"e{epochs}")
            self.assertRegex(r, r"figures recomputed from the records: all agree")
            peaks[epochs] = self.peak_rss_mib("verify", f"e{epochs}")
        # Today's summary, step lists and per-phase totals of 600 more epochs are ~20 MiB.
        self.assertLess(peaks[800] - peaks[200], 3.0, peaks)

    def verify_ok(self, folder):
        r = self.run_trainio("verify", folder)
        self.assertEqual(r.code, 0, r)
        return r.out


class VerifyOpenFilesTest(TrainioTest):
    def test_a_low_open_files_limit_is_raised_to_what_the_ranks_need(self):
        # Verify holds three files open per rank; a soft limit below that (1,024 is common, enough
        # for 340 ranks) is raised up to the hard limit rather than failing on a file it could not open.
        self.ok("run", *RUN, "train.epochs=2", "--output", "four", ranks=4)
        r = self.run_trainio("verify", "four", wrapper=("prlimit", "--nofile=12:4096"))
        self.assertEqual(r.code, 0, r)
        self.assertRegex(r.out, r"figures recomputed from the records: all agree")

    def test_a_hard_limit_below_what_the_ranks_need_is_named(self):
        self.ok("run", *RUN, "train.epochs=2", "--output", "four", ranks=4)
        r = self.run_trainio("verify", "four", wrapper=("prlimit", "--nofile=12:12"))
        self.assertEqual(r.code, 1, r)
        self.assertRegex(r.err, r"(?s)4 ranks.*open files.*limit is 12.*ulimit -n")
