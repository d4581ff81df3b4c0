"""What every run leaves behind and the commands that read it: DLIO's per-rank files, the CSVs,
summary.json's shape, the characterization of a run whose storage calls are known exactly,
`trainio report` and `trainio compare` (the trace files: test_trace.py)."""
import copy
import csv
import json
import itertools
import os
import re
import shutil
import xml.etree.ElementTree as ET

from harness import TrainioTest

RUN = ["dataset.data_folder=data", "dataset.num_files_train=16", "dataset.num_files_eval=4",
       "dataset.record_length_bytes=4096", "train.computation_time=0.001", "evaluation.eval_time=0.001",
       "train.epochs=2", "reader.batch_size=2"]


def weighted(values, steps):
    """The step-weighted mean of the values that exist (None when none does)."""
    pairs = [(n, v) for n, v in zip(steps, values) if v is not None]
    return sum(n * v for n, v in pairs) / sum(n for n, _ in pairs) if pairs else None


class ResultFilesTest(TrainioTest):
    def test_dlio_per_rank_files(self):
        self.ok("run", "default", *RUN, "workflow.checkpoint=true", "checkpoint.checkpoint_folder=ck",
                "checkpoint.checkpoint_after_epoch=2", "--output", "o", ranks=2)
        for rank in (0, 1):
            out = self.read_json("o", f"{rank}_output.json")
            for key in ("host_memory_GB", "host_cpu_count", "host_processor_name", "potential_caching", "host_cpuinfo",
                        "host_meminfo", "hostname"):
                self.assertIn(key, out)
            self.assertIn("MemTotal", out["host_meminfo"])
            for epoch in ("1", "2"):
                e = out[epoch]
                self.assertEqual(len(e["load"]["block1"]), 4)  # 16 samples / (2 ranks x batch 2)
                self.assertEqual(len(e["proc"]["block1"]), 4)
                self.assertEqual(len(e["compute"]["block1"]), 4)
                self.assertEqual(len(e["load"]["eval"]), 2)
                for load, proc in zip(e["load"]["block1"], e["proc"]["block1"]):
                    self.assertGreaterEqual(proc, load)
                self.assertGreater(e["au"]["block1"], 0)
                self.assertGreater(e["throughput"]["block1"], 0)
            stats = self.read_json("o", f"{rank}_per_epoch_stats.json")
            self.assertEqual(sorted(stats), ["1", "2"])
            for e in stats.values():
                self.assertRegex(e["start"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$")
                self.assertRegex(e["duration"], r"^\d+\.\d\d$")
                self.assertRegex(e["block1"]["duration"], r"^\d+\.\d\d$")
                self.assertIn("eval", e)
            ckpt = stats["2"]["save_ckpt1"]
            self.assertIsInstance(ckpt["duration"], float)
            self.assertGreater(ckpt["throughput"], 0)
        self.assertEqual(self.read_json("o", "per_epoch_stats.json"), self.read_json("o", "0_per_epoch_stats.json"))

    def test_checkpoints_split_dlio_blocks(self):
        # 4 steps an epoch, a checkpoint every 3 steps of each epoch (DLIO counts them from 1 again
        # every epoch): each epoch is block1 (3 steps), save_ckpt1, block2 (1 step).
        self.ok("run", "default", *RUN, "workflow.checkpoint=true", "checkpoint.checkpoint_folder=ck",
                "checkpoint.steps_between_checkpoints=3", "--output", "o", ranks=2)
        summary = self.summary("o")
        per_rank_au = {"1": [], "2": []}
        per_rank_thr = {"1": [], "2": []}
        for rank in (0, 1):
            out = self.read_json("o", f"{rank}_output.json")
            stats = self.read_json("o", f"{rank}_per_epoch_stats.json")
            for epoch, sizes in (("1", [3, 1]), ("2", [3, 1])):
                e = out[epoch]
                self.assertEqual([len(e["load"][f"block{b}"]) for b in (1, 2)], sizes)
                self.assertEqual(sorted(k for k in e["au"] if k.startswith("block")), ["block1", "block2"])
                keys = [k for k in stats[epoch] if k.startswith(("block", "save_ckpt"))]
                self.assertEqual(keys, ["block1", "save_ckpt1", "block2"])
                self.assertLessEqual(stats[epoch]["block1"]["end"], stats[epoch]["save_ckpt1"]["start"])
                self.assertLessEqual(stats[epoch]["save_ckpt1"]["end"], stats[epoch]["block2"]["start"])
                # DLIO's epoch value: the blocks' values weighted by their steps, over the blocks
                # that have one (a block of 1 step has no AU; of 2 or fewer, no DLIO throughput).
                per_rank_au[epoch].append(weighted([e["au"][f"block{b}"] for b in (1, 2)], sizes))
                per_rank_thr[epoch].append(weighted([e["throughput"][f"block{b}"] for b in (1, 2)], sizes))
        for i, epoch in enumerate(("1", "2")):
            self.assertAlmostEqual(summary["metric"]["train_au_percentage"][i], sum(per_rank_au[epoch]) / 2, places=3)
            # block1 has 3 steps: a throughput; block2 has 1: none, and the epoch's is block1's.
            self.assertAlmostEqual(summary["metric"]["train_throughput_samples_per_second"][i], sum(per_rank_thr[epoch]),
                                   places=2)
        steps = [(c["epoch"], c["step"]) for c in summary["trainio"]["checkpoint"]["checkpoints"]]
        self.assertEqual(steps, [(1, 3), (2, 3)])
        # Each epoch's block2 has one step: nothing to leave out of it, and the epoch says so.
        self.assertTrue(summary["trainio"]["epochs"][0]["train"]["too_few_steps_to_exclude"])
        self.assertTrue(summary["trainio"]["epochs"][1]["train"]["too_few_steps_to_exclude"])

    def test_csv_tables(self):
        self.ok("run", "default", *RUN, "--output", "o", ranks=2)
        with open(self.path("o", "per_epoch.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([(r["epoch"], r["phase"]) for r in rows], [("1", "train"), ("1", "eval"), ("2", "train"), ("2", "eval")])
        self.assertEqual(int(rows[0]["samples"]), 16)
        self.assertGreater(float(rows[0]["au_percentage"]), 0)
        with open(self.path("o", "per_rank.csv")) as f:
            ranks = list(csv.DictReader(f))
        self.assertEqual(len(ranks), 8)  # 2 epochs x 2 phases x 2 ranks
        self.assertEqual({r["rank"] for r in ranks}, {"0", "1"})
        train = [r for r in ranks if r["phase"] == "train" and r["epoch"] == "1"]
        self.assertEqual(sum(int(r["samples"]) for r in train), 16)
        # Each rank's polling for batches, part of its CPU seconds; the ranks' add up to the phase's.
        for r in ranks:
            self.assertLessEqual(float(r["cpu_polling_seconds"]), float(r["cpu_user_seconds"]) + float(r["cpu_sys_seconds"]) + 0.001)
        polling = self.summary("o")["trainio"]["epochs"][0]["train"]["client_cost"]["cpu_polling_seconds"]
        self.assertAlmostEqual(sum(float(r["cpu_polling_seconds"]) for r in train), polling, places=2)
        self.assertAlmostEqual(float(rows[0]["cpu_polling_seconds"]), polling, places=2)

    def test_summary_shape(self):
        self.ok("run", "default", *RUN, "--output", "o", ranks=2)
        s = self.summary("o")
        shape = {"start": str, "end": str, "num_accelerators": int, "num_hosts": int, "hostname": str, "metric": dict,
                 "num_files_train": int, "num_files_eval": int, "num_samples_per_file": int, "host_cpu_count": list,
                 "host_processor_name": str, "potential_caching": list, "host_cpuinfo": dict, "host_meminfo": dict,
                 "host_memory_GB": list, "data_size_per_host_GB": float, "epochs": int, "trainio": dict}
        for key, kind in shape.items():
            self.assertIsInstance(s[key], kind, key)
        t = s["trainio"]
        self.assertEqual(t["schema_version"], 1)
        self.assertEqual(len(t["context"]["cores_per_rank"]), 2)
        for e in t["epochs"]:
            p = e["train"]
            for key in ("characterization", "stragglers", "client_cost", "io", "batch_wait_seconds", "sample_read_seconds",
                        "compute_seconds", "barrier_seconds"):
                self.assertIn(key, p)
            # 4 steps a rank of 1 ms compute each, at least; the breakdown is per rank.
            self.assertEqual(p["compute_seconds"]["count"], 2 * 4)
            self.assertGreaterEqual(p["step_seconds_per_rank"]["compute"], 4 * 0.001)
            self.assertLess(p["step_seconds_per_rank"]["compute"], p["duration_seconds"])
            st = p["stragglers"]
            self.assertIn(st["slowest_rank"], (0, 1))
            self.assertGreaterEqual(st["slowest_rank_seconds"], st["fastest_rank_seconds"])
            self.assertGreaterEqual(st["first_done_read_bytes_per_second"], st["last_done_read_bytes_per_second"] * 0.999)
            self.assertEqual(sum(h["ranks"] for h in st["hosts"]), 2)
            cost = p["client_cost"]
            self.assertGreaterEqual(cost["cpu_user_seconds"], 0)
            # Reading's cost leaves out the training loops' polling for batches, which the CPU
            # seconds include.
            cpu = cost["cpu_user_seconds"] + cost["cpu_sys_seconds"]
            self.assertGreaterEqual(cost["cpu_polling_seconds"], 0)
            self.assertLessEqual(cost["cpu_polling_seconds"], cpu)
            self.assertAlmostEqual(cost["cpu_seconds_per_GiB_read"],
                                   (cpu - cost["cpu_polling_seconds"]) / (p["bytes_read"] / 2**30), places=6)
        c = t["characterization"]["data_files"]
        self.assertEqual(c["distinct_files_estimate"], 20)  # 16 training + 4 evaluation files
        self.assertGreater(c["metadata_calls"], 0)

    def test_characterization_of_known_calls(self):
        # One 8 MiB file of 1 MiB samples, read one sample per step in file order with one read
        # each: 8 reads of 1 MiB. Reopened for each sample, a read starts a fresh file record:
        # sequential (beyond the last byte, which is 0) except the first; never consecutive.
        data = ["dataset.data_folder=data", "dataset.format=indexed_binary", "dataset.num_files_train=1",
                "dataset.num_samples_per_file=8", "dataset.record_length_bytes=1048576", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "train.epochs=1", "reader.batch_size=1", "reader.read_threads=0",
                "reader.access=sample", "reader.sample_shuffle=off", "reader.file_shuffle=off", "dataset.num_subfolders_train=0"]
        self.ok("run", "default", *data, "--output", "o")
        c = self.summary("o")["trainio"]["epochs"][0]["train"]["characterization"]["data_files"]
        self.assertEqual((c["reads"], c["bytes_read"]), (8, 8 * 2**20))
        self.assertEqual(c["read_size_histogram"]["100K_1M"], 8)
        self.assertEqual((c["sequential_reads"], c["consecutive_reads"]), (7, 0))
        self.assertEqual(c["metadata_calls"], 16)  # an open and a close per sample
        self.assertEqual(c["distinct_files_estimate"], 1)
        self.assertEqual(c["common_access_sizes"], [{"bytes": 2**20, "calls": 8}])
        # Kept open (read_type: memory), each read starts where the previous ended: consecutive.
        self.ok("run", "default", *data, "reader.read_type=memory", "workflow.generate_data=false", "--output", "m")
        c = self.summary("m")["trainio"]["epochs"][0]["train"]["characterization"]["data_files"]
        self.assertEqual((c["sequential_reads"], c["consecutive_reads"]), (7, 7))
        self.assertEqual(c["metadata_calls"], 1)


def fake_runs(base, folder, values, seeds=True, overrides=None):
    """Copies of a real summary.json with the training throughput set to each value."""
    for i, v in enumerate(values):
        s = copy.deepcopy(base)
        if overrides is not None:
            s["trainio"]["workload"]["overrides"] = overrides
        s["metric"]["train_throughput_mean_samples_per_second"] = v
        s["start"] = f"2026-01-01T00:{i:02d}:00.000000"
        s["end"] = f"2026-01-01T00:{i:02d}:30.000000"
        s["trainio"]["workload"]["config"]["train"]["seed"] = i if seeds else 1
        os.makedirs(os.path.join(folder, f"run{i}"))
        with open(os.path.join(folder, f"run{i}", "summary.json"), "w") as f:
            json.dump(s, f)


def exact_u_p(x, y):
    """The two-sided Mann-Whitney U p-value by enumerating every split of the pooled values into
    sides of len(x) and len(y): min(1, 2 x the smaller tail at the observed U), U counted pair by
    pair (a tie half, doubled here to stay in integers)."""
    def doubled_u(a, b):
        return sum(2 if p > q else 1 if p == q else 0 for p in a for q in b)
    pool = list(x) + list(y)
    observed = doubled_u(x, y)
    le = ge = total = 0
    for chosen in itertools.combinations(range(len(pool)), len(x)):
        a = [pool[i] for i in chosen]
        b = [pool[i] for i in range(len(pool)) if i not in chosen]
        u = doubled_u(a, b)
        le, ge, total = le + (u <= observed), ge + (u >= observed), total + 1
    return min(1.0, 2 * min(le, ge) / total)


VERDICT_ROW = re.compile(r"^  (\S+) .* (\d+\.\d{4}|\d\.\de-\d\d|-)  (same|improved|REGRESSION|not significant|changed \(not judged\))$")


def verdicts(out):
    """compare's text table as {figure: (p or None, verdict)}."""
    rows = {}
    for line in out.splitlines():
        m = VERDICT_ROW.match(line)
        if m:
            rows[m.group(1)] = (None if m.group(2) == "-" else float(m.group(2)), m.group(3))
    return rows


class ReportCompareTest(TrainioTest):
    def setUp(self):
        super().setUp()
        self.real = self.ok("run", "default", *RUN, "--output", "real")
        self.base = self.summary("real")

    def test_report_of_one_run_shows_the_end_of_run_table(self):
        r = self.ok("report", self.path("real"))
        table = self.real.out[self.real.out.index("\ndefault - 1 rank"):]
        self.assertEqual(r.out, table)
        self.assertIn("accelerator util.", r.out)
        self.assertEqual(self.read_text("real", "summary.txt"), table)
        # A run without the kept table (an older trainio's, or DLIO's) gets one made from its summary.
        fake_runs(self.base, self.path("bare"), [100])
        r = self.ok("report", self.path("bare", "run0"))
        self.assertIn("accelerator util.", r.out)
        self.assertIn("train_throughput_mean_samples_per_second", r.out)

    def test_report_aggregates_and_flags_a_spread_over_5_percent(self):
        fake_runs(self.base, self.path("steady"), [100, 101, 99])
        r = self.ok("report", self.path("steady"), "-o", self.path("a.json"))
        a = self.read_json("a.json")
        t = a["figures"]["train_throughput_mean_samples_per_second"]
        self.assertAlmostEqual(t["mean"], 100)
        self.assertTrue(t["within_5_percent"])
        fake_runs(self.base, self.path("spread"), [100, 100, 110])
        r = self.ok("report", self.path("spread"), "-o", self.path("b.json"))
        self.assertIn("SPREAD > 5%", r.out)
        self.assertFalse(self.read_json("b.json")["figures"]["train_throughput_mean_samples_per_second"]["within_5_percent"])

    def test_report_never_averages_different_configurations(self):
        # A sweep of read_threads and ranks: 2 + 1 + 2 runs of three configurations. Seeds and
        # output folders differ run to run and do not split a configuration.
        threads = [2, 2, 4, 2, 2]
        ranks = [1, 1, 1, 2, 2]
        fake_runs(self.base, self.path("sweep"), [100, 102, 150, 190, 194])
        for i, (t, n) in enumerate(zip(threads, ranks)):
            p = self.path("sweep", f"run{i}", "summary.json")
            s = self.read_json(p)
            s["trainio"]["workload"]["config"]["reader"]["read_threads"] = t
            s["trainio"]["workload"]["config"]["output"]["folder"] = f"sweep/run{i}"
            s["num_accelerators"] = n
            with open(p, "w") as f:
                json.dump(s, f)
        r = self.ok("report", self.path("sweep"))
        self.assertIn("5 runs of 3 configurations, each aggregated on its own", r.out)
        self.assertIn("reader.read_threads=4", r.out)
        a = self.read_json(self.path("sweep", "aggregate.json"))
        self.assertNotIn("figures", a)  # a reader expecting one configuration fails, not misreads
        groups = a["configurations"]
        self.assertEqual(len({g["configuration"] for g in groups}), 3)
        means = sorted(g["figures"]["train_throughput_mean_samples_per_second"]["mean"] for g in groups)
        self.assertEqual([round(m) for m in means], [101, 150, 192])
        self.assertEqual(sorted(len(g["runs"]) for g in groups), [1, 2, 2])
        for g in groups:
            self.assertIn("num_accelerators=2" if g["figures"]["train_throughput_mean_samples_per_second"]["mean"] > 180
                          else "num_accelerators=1", g["distinguished_by"])

        # The configuration of one run has no stdev, CV or spread: n/a, null, and no 5% verdict.
        one = next(g for g in groups if len(g["runs"]) == 1)
        t = one["figures"]["train_throughput_mean_samples_per_second"]
        self.assertEqual((t["values"], t["mean"]), ([150], 150))
        for key in ("stdev", "cv", "spread", "within_5_percent"):
            self.assertIsNone(t[key], key)
        self.assertTrue(any("2 or more runs" in n for n in one["notes"]), one["notes"])
        block = next(b for b in r.out.split("\nconfiguration ") if "reader.read_threads=4" in b)
        row = next(line for line in block.splitlines() if "train_throughput_mean_samples_per_second" in line)
        self.assertEqual(row.split()[-3:], ["n/a", "n/a", "n/a"])  # stdev, CV, spread
        self.assertNotIn("SPREAD", row)
        two = next(g for g in groups if len(g["runs"]) == 2)
        self.assertIsNotNone(two["figures"]["train_throughput_mean_samples_per_second"]["stdev"])

        # A second report goes beside the first, never over it; an --output that exists is refused.
        r = self.ok("report", self.path("sweep", "run0"), self.path("sweep", "run1"))
        self.assertIn(os.path.join("sweep", "aggregate-2.json"), r.out)
        one = self.read_json(self.path("sweep", "aggregate-2.json"))
        self.assertAlmostEqual(one["figures"]["train_throughput_mean_samples_per_second"]["mean"], 101)
        self.assertEqual(len(self.read_json(self.path("sweep", "aggregate.json"))["configurations"]), 3)
        r = self.run_trainio("report", self.path("sweep"), "-o", self.path("sweep", "aggregate.json"))
        self.assertEqual(r.code, 2, r)
        self.assertIn("exists", r.err)
        self.assertEqual(len(self.read_json(self.path("sweep", "aggregate.json"))["configurations"]), 3)

    def test_compare_exit_codes(self):
        # The same run against itself: no change.
        self.assertEqual(self.run_trainio("compare", self.path("real"), self.path("real")).code, 0)
        # One run a side, 20% slower: the threshold decides.
        fake_runs(self.base, self.path("base1"), [100])
        fake_runs(self.base, self.path("slow1"), [80])
        r = self.run_trainio("compare", self.path("base1"), self.path("slow1"), "--metric",
                             "train_throughput_mean_samples_per_second")
        self.assertEqual(r.code, 1, r)
        self.assertIn("REGRESSION", r.out)
        # Five runs a side, 20% slower, clearly apart: significant.
        fake_runs(self.base, self.path("base5"), [100, 101, 99, 100.5, 99.5])
        fake_runs(self.base, self.path("slow5"), [80, 81, 79, 80.5, 79.5])
        r = self.run_trainio("compare", self.path("base5"), self.path("slow5"), "--format", "junit")
        self.assertEqual(r.code, 1, r)
        suite = ET.fromstring(r.out)
        failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
        self.assertEqual(failed, ["train_throughput_mean_samples_per_second"])
        # Five a side that overlap: a 6% lower median is not significant.
        fake_runs(self.base, self.path("noisy"), [93, 110, 90, 94, 108])
        r = self.run_trainio("compare", self.path("base5"), self.path("noisy"), "--format", "markdown")
        self.assertEqual(r.code, 0, r)
        self.assertIn("not significant", r.out)
        # A faster candidate is not a regression.
        fake_runs(self.base, self.path("fast5"), [120, 121, 119, 120.5, 119.5])
        self.assertEqual(self.run_trainio("compare", self.path("base5"), self.path("fast5")).code, 0)

    def test_compare_p_value_and_verdict_follow_one_rule(self):
        # The case: 3 identical runs against 3 identical runs 20% slower. Of the 20 ways
        # to split 6 runs 3 and 3, one puts the three slow ones on the candidate's side: p = 0.1
        # (exact), which 3 vs 3 runs cannot get below: not significant, exit 0.
        fake_runs(self.base, self.path("base3"), [100, 100, 100])
        fake_runs(self.base, self.path("slow3"), [80, 80, 80])
        r = self.run_trainio("compare", self.path("base3"), self.path("slow3"))
        rows = verdicts(r.out)
        p, verdict = rows["train_throughput_mean_samples_per_second"]
        self.assertAlmostEqual(p, exact_u_p([100] * 3, [80] * 3), places=4)
        self.assertAlmostEqual(p, 0.1, places=4)
        self.assertEqual(verdict, "not significant", r)
        self.assertIn("3 vs 3 runs cannot reach p < 0.05", r.out)
        self.assertIn("smallest two-sided p for 3 vs 3 runs is 0.1", r.out)
        self.assertIn("exact", r.out)
        self.assertNotIn("REGRESSION", r.out)
        self.assertEqual(r.code, 0, r)
        # 4 vs 4 and 3 vs 5, identical within each side: p = 2/70 and 2/56, below 0.05: regressions.
        fake_runs(self.base, self.path("base4"), [100] * 4)
        fake_runs(self.base, self.path("slow4"), [80] * 4)
        fake_runs(self.base, self.path("slow5"), [80] * 5)
        for base, slow, x, y in (("base4", "slow4", [100] * 4, [80] * 4), ("base3", "slow5", [100] * 3, [80] * 5)):
            r = self.run_trainio("compare", self.path(base), self.path(slow), "--format", "text")
            p, verdict = verdicts(r.out)["train_throughput_mean_samples_per_second"]
            self.assertAlmostEqual(p, exact_u_p(x, y), places=4)
            self.assertEqual(verdict, "REGRESSION", r)
            self.assertNotIn("cannot reach", r.out)
            self.assertEqual(r.code, 1, r)
        # 9 vs 9 apart: p = 2 / C(18, 9) = 4.1e-05, shown as such rather than as 0.0000.
        fake_runs(self.base, self.path("base9"), [100 + i for i in range(9)])
        fake_runs(self.base, self.path("slow9"), [80 + i for i in range(9)])
        r = self.run_trainio("compare", self.path("base9"), self.path("slow9"))
        row = next(line for line in r.out.splitlines() if "train_throughput_mean_samples_per_second" in line)
        self.assertIn(" 4.1e-05  REGRESSION", row)
        self.assertEqual(verdicts(r.out)["train_throughput_mean_samples_per_second"][0], float(f"{2 / 48620:.1e}"))
        # Whatever the runs, the rule the tool states: a figure beyond its threshold is a
        # regression or an improvement exactly when p < alpha; exit 1 exactly when one regressed.
        for alpha in ("0.05", "0.1", "0.2"):
            for base, cand in (("base3", "slow3"), ("base4", "slow4"), ("base3", "slow5")):
                r = self.run_trainio("compare", self.path(base), self.path(cand), "--alpha", alpha)
                rows = verdicts(r.out)
                self.assertTrue(rows, r)
                for name, (p, verdict) in rows.items():
                    if verdict in ("REGRESSION", "improved"):
                        self.assertLess(p, float(alpha), (name, r))
                    if verdict == "not significant":
                        self.assertGreaterEqual(p, float(alpha), (name, r))
                regressed = any(v == "REGRESSION" for _, v in rows.values())
                self.assertEqual(r.code, 1 if regressed else 0, r)
                if "cannot reach" in r.out:
                    self.assertFalse(any(v in ("REGRESSION", "improved") for _, v in rows.values()), r)

    def test_compare_refuses_unusable_input(self):
        os.makedirs(self.path("broken"))
        with open(self.path("broken", "summary.json"), "w") as f:
            f.write("{not json")
        r = self.run_trainio("compare", self.path("real"), self.path("broken"))
        self.assertEqual(r.code, 2, r)
        self.assertIn("broken/summary.json' is not valid JSON", r.err)
        os.makedirs(self.path("empty"))
        r = self.run_trainio("compare", self.path("real"), self.path("empty"))
        self.assertEqual(r.code, 2, r)
        self.assertIn("holds no run", r.err)
        r = self.run_trainio("compare", self.path("real"), self.path("real"), "--metric", "no_such_figure")
        self.assertEqual(r.code, 2, r)
        self.assertIn("no_such_figure", r.err)
        r = self.run_trainio("compare", self.path("real"), self.path("real"), "--metric",
                             "metric.train_au_percentage.99999999999999999999")
        self.assertEqual(r.code, 2, r)
        for option in (["--threshold", "lots"], ["--threshold", "inf"], ["--alpha", "nan"], ["--alpha", "1"]):
            r = self.run_trainio("compare", self.path("real"), self.path("real"), *option)
            self.assertEqual(r.code, 2, (option, r))

    def test_summaries_of_unexpected_shape_are_refused_or_read_around(self):
        # Hand-edited or foreign summaries: never a crash. What is unreadable is left out.
        odd = [{"trainio": {"workload": "x"}}, {"trainio": {"workload": {"name": 5}}}, {"start": 5},
               {"trainio": {"epochs": 5}}, {"trainio": {"epochs": [{"train": 5}]}}, {"num_accelerators": "1"},
               {"metric": {"train_au_mean_percentage": "98.5"}}]
        for i, change in enumerate(odd):
            s = copy.deepcopy(self.base)
            s.update({k: v for k, v in change.items() if k != "metric"})
            s["metric"].update(change.get("metric", {}))
            os.makedirs(self.path(f"odd{i}"))
            with open(self.path(f"odd{i}", "summary.json"), "w") as f:
                json.dump(s, f)
            for args in (["report", self.path(f"odd{i}")], ["compare", self.path("real"), self.path(f"odd{i}")]):
                r = self.run_trainio(*args)
                self.assertIn(r.code, (0, 1), (change, r))
                self.assertNotIn("internal error", r.err, (change, r))
        s = copy.deepcopy(self.base)
        s["metric"] = [1, 2]
        os.makedirs(self.path("array"))
        with open(self.path("array", "summary.json"), "w") as f:
            json.dump(s, f)
        r = self.run_trainio("compare", self.path("real"), self.path("array"))
        self.assertEqual(r.code, 2, r)
        self.assertIn("not a trainio or DLIO summary", r.err)

    def test_compare_from_a_zero_baseline_and_with_missing_figures(self):
        def runs(folder, wait_p99, throughput=100):
            for i, v in enumerate(wait_p99):
                s = copy.deepcopy(self.base)
                for e in s["trainio"]["epochs"]:
                    e["train"]["batch_wait_seconds"]["p99"] = v
                s["metric"]["train_throughput_mean_samples_per_second"] = throughput if i else None
                os.makedirs(self.path(folder, f"run{i}"))
                with open(self.path(folder, f"run{i}", "summary.json"), "w") as f:
                    json.dump(s, f)
        runs("zero", [0, 0])
        runs("slow", [5, 5])
        r = self.run_trainio("compare", self.path("zero"), self.path("slow"), "--metric", "batch_wait_p99_seconds")
        self.assertEqual(r.code, 1, r)
        row = next(line for line in r.out.splitlines() if "batch_wait_p99_seconds" in line)
        self.assertIn("n/a", row)
        self.assertIn("REGRESSION", row)
        # The throughput is null in one run a side: it is not compared, and the note says so.
        r = self.run_trainio("compare", self.path("zero"), self.path("slow"))
        self.assertIn("train_throughput_mean_samples_per_second is missing from 1 of 2 baseline", r.out)
        self.assertEqual(self.run_trainio("compare", self.path("slow"), self.path("zero"), "--metric",
                                          "batch_wait_p99_seconds").code, 0)


def set_figure(folder, dotted_path, values):
    """Sets a dotted path of each run's summary.json in `folder` (run0, run1, ...) to a value."""
    for i, v in enumerate(values):
        path = os.path.join(folder, f"run{i}", "summary.json")
        with open(path) as f:
            s = json.load(f)
        node = s
        *parents, last = dotted_path.split(".")
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        node[last] = v
        with open(path, "w") as f:
            json.dump(s, f)


class CompareForCiTest(TrainioTest):
    """compare as CI uses it: stable figures by default, a threshold per figure, the configuration
    differences first, no verdict on figures that are neither better nor worse when larger."""

    def setUp(self):
        super().setUp()
        self.ok("run", "default", *RUN, "--output", "real")
        self.base = self.summary("real")

    def test_tail_latencies_do_not_decide_by_default(self):
        # 4 runs a side: the fewest with which a change can be significant (3 against 3 cannot).
        fake_runs(self.base, self.path("a"), [100] * 4)
        fake_runs(self.base, self.path("b"), [100] * 4)
        # Between two runs of one configuration p99s moved -72% and -74%: noise, not a verdict.
        epochs = len(self.base["trainio"]["epochs"])
        for e in range(epochs):
            set_figure(self.path("b"), f"trainio.epochs.{e}.train.batch_wait_seconds.p99", [9.0] * 4)
        r = self.run_trainio("compare", self.path("a"), self.path("b"))
        self.assertEqual(r.code, 0, r)
        self.assertNotIn("batch_wait_p99_seconds", r.out)
        # Asked for by name, they are compared.
        r = self.run_trainio("compare", self.path("a"), self.path("b"), "--metric", "batch_wait_p99_seconds")
        self.assertEqual(r.code, 1, r)
        self.assertEqual(verdicts(r.out)["batch_wait_p99_seconds"], (round(2 / 70, 4), "REGRESSION"))

    def test_a_threshold_per_figure(self):
        fake_runs(self.base, self.path("a"), [100])
        fake_runs(self.base, self.path("b"), [92])
        self.assertEqual(self.run_trainio("compare", self.path("a"), self.path("b")).code, 1)
        r = self.run_trainio("compare", self.path("a"), self.path("b"), "--threshold",
                             "train_throughput_mean_samples_per_second=10%")
        self.assertEqual(r.code, 0, r)
        self.assertIn("10.0%", r.out)
        err = self.run_trainio("compare", self.path("a"), self.path("b"), "--threshold", "train_throughput_mean_samples_per_secnd=10%")
        self.assertEqual(err.code, 2, err)
        self.assertIn("did you mean 'train_throughput_mean_samples_per_second'", err.err)

    def test_read_bytes_per_second_is_not_judged(self):
        fake_runs(self.base, self.path("a"), [100])
        fake_runs(self.base, self.path("b"), [100])
        set_figure(self.path("a"), "trainio.train.read_bytes_per_second_mean", [1000.0])
        set_figure(self.path("b"), "trainio.train.read_bytes_per_second_mean", [290.0])  # less read amplification
        r = self.run_trainio("compare", self.path("a"), self.path("b"), "--metric", "read_bytes_per_second")
        self.assertEqual(r.code, 0, r)
        self.assertNotIn("REGRESSION", r.out)
        self.assertIn("changed", r.out)

    def test_unknown_figure_gets_a_suggestion(self):
        r = self.run_trainio("compare", self.path("real"), self.path("real"), "--metric", "train_au_mean_percent")
        self.assertEqual(r.code, 2, r)
        self.assertIn("did you mean 'train_au_mean_percentage'", r.err)

    def test_configuration_differences_come_first(self):
        fake_runs(self.base, self.path("a"), [100])
        fake_runs(self.base, self.path("b"), [100])
        set_figure(self.path("b"), "trainio.workload.config.reader.read_threads", [8])
        r = self.run_trainio("compare", self.path("a"), self.path("b"))
        first = r.out.splitlines()[0]
        self.assertIn("configurations differ", first)
        self.assertIn("reader.read_threads", r.out.split("figure")[0])
        # Seeds and folders are not differences worth a line.
        self.assertNotIn("train.seed", r.out)

    def test_junit_cases_carry_time_and_properties(self):
        fake_runs(self.base, self.path("a"), [100])
        fake_runs(self.base, self.path("b"), [80])
        r = self.run_trainio("compare", self.path("a"), self.path("b"), "--format", "junit")
        case = next(c for c in ET.fromstring(r.out).iter("testcase")
                    if c.get("name") == "train_throughput_mean_samples_per_second")
        self.assertEqual(float(case.get("time")), 30.0)  # the candidate run's duration
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        for key in ("baseline", "candidate", "change", "threshold", "verdict"):
            self.assertIn(key, props)
        self.assertEqual(props["verdict"], "REGRESSION")
