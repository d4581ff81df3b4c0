"""Campaigns: `trainio sweep` runs every point as its own mpirun job, records a failed run and
goes on, resumes what did not finish, refuses a bad point before running anything; `trainio
max-accelerators` searches the rank counts and leaves its evidence."""
import csv
import os

from harness import TrainioTest

TINY = ["dataset.num_files_train=8", "dataset.num_samples_per_file=8", "dataset.record_length_bytes=16384",
        "dataset.record_length_bytes_stdev=0", "dataset.num_files_eval=0", "workflow.evaluation=false",
        "train.epochs=2", "train.computation_time=0.001", "reader.batch_size=2"]


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


class SweepTest(TrainioTest):
    def test_sweep_runs_every_point_records_a_failure_and_resumes(self):
        self.ok("generate", "default", *TINY, "dataset.data_folder=d1")
        # Point d2 has no dataset (generate_data is off): its runs fail, the sweep goes on.
        sweep = ["sweep", "default", *TINY, "workflow.generate_data=false", "--vary", "dataset.data_folder=d1,d2",
                 "--vary", "reader.read_threads=1,2", "--ranks", "1,2", "--output", "s"]
        r = self.run_trainio(*sweep)
        self.assertEqual(r.code, 1, r)
        self.assertIn("sweep: 8 points x 1 runs = 8 jobs", r.out)
        self.assertIn("4 of 8 runs failed", r.out)
        table = rows(self.path("s", "sweep.csv"))
        self.assertEqual(len(table), 8)
        self.assertEqual([row["ranks"] for row in table], ["1"] * 4 + ["2"] * 4)
        for row in table:
            if row["dataset.data_folder"] == "d1":
                self.assertEqual((row["runs_finished"], row["runs_failed"]), ("1", "0"), row)
                self.assertIn(row["verdict"], ("pass", "fail"), row)
                self.assertGreater(float(row["samples_per_second_mean"]), 0, row)
                self.assertGreater(float(row["read_MiB_per_second_mean"]), 0, row)
                self.assertGreater(float(row["au_mean_percent"]), 0, row)
            else:
                self.assertEqual((row["runs_finished"], row["runs_failed"], row["verdict"]), ("0", "1", "failed runs"), row)
        # Each run is a real run of its point's values and ranks.
        s = self.summary(os.path.join("s", "ranks=2,dataset.data_folder=d1,reader.read_threads=2", "run1"))
        self.assertEqual(s["num_accelerators"], 2)
        self.assertEqual(s["trainio"]["workload"]["config"]["reader"]["read_threads"], 2)
        failed_log = self.read_text("s", "ranks=1,dataset.data_folder=d2,reader.read_threads=1", "run1.log")
        self.assertIn("d2", failed_log)

        # Rerun once d2 exists: the finished runs are kept, the failed ones run again, their first
        # attempt moved aside rather than deleted.
        self.ok("generate", "default", *TINY, "dataset.data_folder=d2")
        r = self.ok(*sweep)
        self.assertEqual(r.out.count("finished earlier, kept"), 4, r.out)
        self.assertNotIn("FAILED", r.out)
        self.assertTrue(os.path.exists(self.path("s", "ranks=1,dataset.data_folder=d2,reader.read_threads=1",
                                                 "run1.failed-1.log")))
        self.assertEqual({row["runs_finished"] for row in rows(self.path("s", "sweep.csv"))}, {"1"})
        # The sweep's folder is a set of runs for report: each point its own configuration, the
        # failed attempts moved aside left out.
        r = self.ok("report", self.path("s"))
        self.assertIn("8 runs of 8 configurations, each aggregated on its own", r.out)
        # One run a point: no stdev, CV or spread to show (null, never 0), and no 5% verdict.
        groups = self.read_json("s", "aggregate.json")["configurations"]
        for f in (f for g in groups for f in g["figures"].values()):
            self.assertEqual((f["stdev"], f["cv"], f["spread"], f["within_5_percent"]), (None, None, None, None), f)

        # The same folder with other shared settings is another sweep: refused.
        r = self.run_trainio("sweep", "default", *TINY, "train.epochs=3", "--vary", "dataset.data_folder=d1",
                             "--output", "s")
        self.assertEqual(r.code, 2, r)
        self.assertIn("holds the runs of trainio sweep", r.err)

    def test_a_bad_point_is_refused_before_anything_runs(self):
        r = self.run_trainio("sweep", "default", *TINY, "--vary", "reader.read_threads=1,-3", "--output", "s")
        self.assertEqual(r.code, 2, r)
        self.assertIn("read_threads", r.err)
        self.assertFalse(os.path.exists(self.path("s")))
        for bad in (["--vary", "reader.read_threads"], ["--ranks", "1,x"], ["--launcher", "mpirun -np 2"]):
            r = self.run_trainio("sweep", "default", *TINY, *bad, "--output", "s")
            self.assertEqual(r.code, 2, (bad, r))
            self.assertFalse(os.path.exists(self.path("s")), bad)

    def test_a_folder_whose_campaign_record_is_not_one_is_refused(self):
        os.makedirs(self.path("s"))
        for text in ("not json", "[1, 2]", '{"words": []}'):
            with open(self.path("s", "campaign.json"), "w") as f:
                f.write(text)
            r = self.run_trainio("sweep", "default", *TINY, "--vary", "reader.read_threads=1", "--output", "s")
            self.assertEqual(r.code, 2, (text, r))
            self.assertIn("is not a campaign's record", r.err)
            self.assertNotIn("terminate", r.err)


class MaxAcceleratorsTest(TrainioTest):
    def search(self, au, out, *more):
        return self.run_trainio("max-accelerators", "default", *TINY, "dataset.data_folder=d",
                                "workflow.generate_data=true", f"metric.au={au}", "--ranks-to", "3", "--output", out, *more)

    def test_every_probe_passing_gives_the_limit_and_its_evidence(self):
        r = self.search(0.0, "all")
        self.assertEqual(r.code, 0, r)
        self.assertIn("answer: 3 ranks, the most tried", r.out)
        probes = rows(self.path("all", "max-accelerators.csv"))
        self.assertEqual([p["ranks"] for p in probes], ["1", "2", "3"])  # 1, 2, then the limit
        self.assertEqual({p["verdict"] for p in probes}, {"pass"})
        doc = self.read_json(self.path("all", "max-accelerators.json"))
        self.assertEqual(doc["max_accelerators"], 3)
        self.assertIsNone(doc["first_failing"])
        self.assertEqual(self.summary(os.path.join("all", "ranks=3"))["num_accelerators"], 3)

    def test_no_count_meeting_the_target_says_so(self):
        # No run spends all its time computing. The model's prediction is shown beside: 16 KiB x 2
        # per 1 ms is 31.25 MiB/s per accelerator, so 100 MiB/s feeds 3 at 100%.
        r = self.search(1.0, "none", "--storage-bandwidth", "100MiB/s")
        self.assertEqual(r.code, 0, r)
        self.assertIn("answer: none", r.out)
        doc = self.read_json(self.path("none", "max-accelerators.json"))
        self.assertEqual((doc["max_accelerators"], doc["first_failing"]), (0, 1))
        self.assertEqual([p["verdict"] for p in doc["probes"]], ["fail"])
        self.assertIn("predicted from 100.00 MiB/s and 31.25 MiB/s per accelerator: 3 (measured: 0)", r.out)
        self.assertEqual(doc["prediction"]["max_accelerators"], 3)

    def test_a_rerun_with_other_settings_never_reuses_the_probes(self):
        self.assertEqual(self.search(0.0, "m").code, 0)
        # Other settings into the same folder: its probes were not run with them, so it is refused.
        r = self.search(0.0, "m", "train.epochs=3")
        self.assertEqual(r.code, 2, r)
        self.assertIn("holds the runs of trainio max-accelerators", r.err)
        # The same settings resume: every probe is kept.
        r = self.search(0.0, "m")
        self.assertEqual(r.code, 0, r)
        self.assertEqual(r.out.count("finished earlier, kept"), 3, r.out)

    def test_config_predicts_from_a_storage_bandwidth(self):
        r = self.ok("config", "default", *TINY, "--storage-bandwidth", "100MiB/s")
        self.assertIn("to keep each accelerator busy: 31.25 MiB/s per rank", r.out)
        self.assertIn("predicted on 100.00 MiB/s: at most 3 accelerators meet AU >= 90%", r.out)
        r = self.run_trainio("config", "default", "--storage-bandwidth", "fast")
        self.assertEqual(r.code, 2, r)
        self.assertIn("--storage-bandwidth 'fast'", r.err)
