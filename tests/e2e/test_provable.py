"""Every figure agrees with the records the run keeps: each test recomputes figures of a small run
from its own files (DLIO's per-rank files, the CSVs, the records) with code of its own, as a
careful reviewer would, and requires the reported figures to match."""
import csv
import datetime
import os

from harness import TrainioTest

SLOW_IO = os.environ.get("TRAINIO_SLOW_IO", os.path.join(os.path.dirname(__file__), "../../build/tests/libtrainio_slow_io.so"))

SMALL = ["dataset.data_folder=data", "dataset.record_length_bytes=4096", "dataset.num_samples_per_file=1",
         "--no-progress"]


def seconds(iso):
    return datetime.datetime.fromisoformat(iso).timestamp()


def span(entry):
    return seconds(entry["end"]) - seconds(entry["start"])


def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-12)


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


class EvaluationWindowTest(TrainioTest):
    def test_eval_figures_are_computed_over_the_recorded_eval_span(self):
        # DLIO: the evaluation's AU and samples/s are over the span start_eval..end_eval that
        # per_epoch_stats records. A figure over another window fails a reviewer's recomputation.
        self.ok("run", "default", *SMALL, "dataset.num_files_train=8", "dataset.num_files_eval=16",
                "reader.batch_size=2", "reader.batch_size_eval=2", "train.epochs=2", "train.computation_time=0.001",
                "evaluation.eval_time=0.003", "reader.read_threads=2", "--output", "o", ranks=2)
        summary = self.summary("o")
        au, thr = {1: [], 2: []}, {1: [], 2: []}
        for rank in (0, 1):
            out = self.read_json("o", f"{rank}_output.json")
            stats = self.read_json("o", f"{rank}_per_epoch_stats.json")
            for epoch in (1, 2):
                e, window = out[str(epoch)], stats[str(epoch)]["eval"]
                t = span(window)
                self.assertAlmostEqual(float(window["duration"]), t, delta=0.006)
                proc, compute = e["proc"]["eval"], e["compute"]["eval"]
                self.assertEqual(len(compute), 4)  # 16 samples / (2 ranks x batch 2)
                # DLIO's compute_metrics_eval, exclude_start_steps = 1.
                mine_au = 100 * sum(compute[1:]) / (t - sum(proc[:1]))
                mine_thr = len(compute) * 2 / t
                self.assertLess(rel(e["au"]["eval"], mine_au), 1e-3, (rank, epoch, e["au"]["eval"], mine_au))
                self.assertLess(rel(e["throughput"]["eval"], mine_thr), 1e-3, (rank, epoch, e["throughput"]["eval"], mine_thr))
                au[epoch].append(mine_au)
                thr[epoch].append(mine_thr)
        for i, epoch in enumerate((1, 2)):
            self.assertLess(rel(summary["metric"]["eval_au_percentage"][i], sum(au[epoch]) / 2), 1e-3)
            self.assertLess(rel(summary["metric"]["eval_throughput_samples_per_second"][i], sum(thr[epoch])), 1e-3)


class CheckpointTimesTest(TrainioTest):
    CKPT = ["workflow.train=false", "workflow.generate_data=false", "workflow.checkpoint=true",
            "checkpoint.checkpoint_folder=ck", "model.model_size_bytes=4194304", "model.parallelism.tensor=2",
            "--no-progress"]

    def test_a_ranks_save_time_is_its_own_io_not_the_wait_for_others(self):
        # Rank 1's writes are slowed; rank 0's own save ends long before. Its duration must not
        # include waiting for rank 1 (DLIO's per-rank duration is the rank's own).
        args = ["run", "default", *self.CKPT, "checkpoint.num_checkpoints_write=1", "checkpoint.num_checkpoints_read=0",
                "--output", "o"]
        slow = {"LD_PRELOAD": SLOW_IO, "TRAINIO_FAULT_SLOW_PATH": "/ck/", "TRAINIO_FAULT_SLOW_SECONDS": "0.2",
                "TRAINIO_FAULT_SLOW_WRITES": "1"}
        r = self.run_mpmd(({}, args), (slow, args))
        self.assertEqual(r.code, 0, r)
        own = [self.read_json("o", f"{rank}_per_epoch_stats.json")["1"]["save_ckpt1"] for rank in (0, 1)]
        self.assertGreater(own[1]["duration"], 0.4, own)  # writes of 0.2 s each
        self.assertLess(own[0]["duration"], own[1]["duration"] / 2, own)
        for o in own:
            self.assertAlmostEqual(o["duration"], span(o), delta=2e-6 + 1e-6)
        c = self.summary("o")["trainio"]["checkpoint"]["checkpoints"][0]
        self.assertAlmostEqual(c["duration_seconds"], own[1]["duration"], delta=1e-6)
        self.assertAlmostEqual(c["fastest_rank_seconds"], own[0]["duration"], delta=1e-6)
        self.assertGreaterEqual(c["collective_seconds"], c["duration_seconds"])
        self.assertAlmostEqual(c["rank_bytes_per_second_max"], c["file_bytes"] / 2 / own[0]["duration"], delta=1)

    def test_a_load_records_duration_as_end_minus_start(self):
        self.ok("run", "default", *self.CKPT, "checkpoint.num_checkpoints_write=2", "checkpoint.num_checkpoints_read=2",
                "--output", "o", ranks=2)
        for rank in (0, 1):
            stats = self.read_json("o", f"{rank}_per_epoch_stats.json")["1"]
            for key in ("save_ckpt1", "save_ckpt2", "load_ckpt1", "load_ckpt2"):
                # DLIO writes duration = end - start; the ISO times have microseconds.
                self.assertAlmostEqual(stats[key]["duration"], span(stats[key]), delta=3e-6, msg=(rank, key, stats[key]))


class CheckpointTotalsTest(TrainioTest):
    def test_all_saves_together_beside_dlios_mean_of_rates(self):
        # DLIO's key is the mean of per-save rates, which one fast save dominates; trainio's own
        # figure is every save's bytes over their time together, with the per-save range.
        self.ok("run", "default", *CheckpointTimesTest.CKPT, "checkpoint.num_checkpoints_write=3",
                "checkpoint.num_checkpoints_read=0", "--output", "o", ranks=2)
        c = self.summary("o")["trainio"]["checkpoint"]
        saves = [x for x in c["checkpoints"] if x["kind"] == "save"]
        total = c["saves"]
        self.assertEqual(total["count"], 3)
        self.assertEqual(total["file_bytes"], sum(x["file_bytes"] for x in saves))
        self.assertAlmostEqual(total["bytes_per_second"], total["file_bytes"] / sum(x["duration_seconds"] for x in saves),
                               delta=1e-6 * total["bytes_per_second"])
        self.assertEqual(total["bytes_per_second_min"], min(x["bytes_per_second"] for x in saves))
        self.assertEqual(total["bytes_per_second_max"], max(x["bytes_per_second"] for x in saves))
        self.assertIsNone(c["loads"])


class CheckpointPlacementTest(TrainioTest):
    def test_steps_between_checkpoints_counts_within_each_epoch_as_dlio(self):
        # DLIO resets next_checkpoint_step every epoch: with 4 steps an epoch and a checkpoint
        # every 3 steps, each epoch is block1 (3 steps), save_ckpt1, block2 (1 step).
        self.ok("run", "default", *SMALL, "dataset.num_files_train=16", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "reader.batch_size=2", "train.epochs=2", "train.computation_time=0.001",
                "workflow.checkpoint=true", "checkpoint.checkpoint_folder=ck", "checkpoint.steps_between_checkpoints=3",
                "model.model_size_bytes=4096", "--output", "o", ranks=2)
        for rank in (0, 1):
            out = self.read_json("o", f"{rank}_output.json")
            stats = self.read_json("o", f"{rank}_per_epoch_stats.json")
            for epoch in ("1", "2"):
                self.assertEqual([len(out[epoch]["load"][b]) for b in ("block1", "block2")], [3, 1])
                self.assertEqual([k for k in stats[epoch] if k.startswith(("block", "save"))],
                                 ["block1", "save_ckpt1", "block2"])
        checkpoints = self.summary("o")["trainio"]["checkpoint"]["checkpoints"]
        self.assertEqual([(c["epoch"], c["step"], c["folder"]) for c in checkpoints],
                         [(1, 3, "global_epoch1_step3"), (2, 3, "global_epoch2_step3")])
        self.assertEqual(sorted(os.listdir(self.path("ck"))), ["global_epoch1_step3", "global_epoch2_step3"])


class PhaseDurationTest(TrainioTest):
    def test_a_phase_lasts_exactly_its_steps_also_when_a_checkpoint_follows(self):
        # Every step starts where the one before ended, so a phase's time (checkpoints between its
        # steps left out) is the sum of its steps' load, compute and barrier. A checkpoint after the
        # last step must not add its bookkeeping to the epoch.
        self.ok("run", "default", *SMALL, "dataset.num_files_train=16", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "reader.batch_size=2", "train.epochs=3", "train.computation_time=0.001",
                "workflow.checkpoint=true", "checkpoint.checkpoint_folder=ck", "checkpoint.steps_between_checkpoints=4",
                "model.model_size_bytes=4096", "--output", "o", ranks=2)
        summary = self.summary("o")
        for rank in (0, 1):
            out = self.read_json("o", f"{rank}_output.json")
            per_rank = [r for r in rows(self.path("o", "per_rank.csv")) if r["rank"] == str(rank)]
            for i, epoch in enumerate(("1", "2", "3")):
                e = out[epoch]
                steps = sum(sum(e[k][b]) for k in ("proc", "barrier") for b in e["proc"])
                self.assertAlmostEqual(float(per_rank[i]["duration_seconds"]), steps, delta=2e-6 * 8,
                                       msg=(rank, epoch))
        for e in summary["trainio"]["epochs"]:
            self.assertGreater(e["train"]["duration_seconds"], 0)


class ThroughputColumnsTest(TrainioTest):
    def test_each_csv_names_its_throughput_by_formula(self):
        self.ok("run", "default", *SMALL, "dataset.num_files_train=16", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "reader.batch_size=2", "train.epochs=1", "train.computation_time=0.002",
                "--output", "o", ranks=2)
        epoch = rows(self.path("o", "per_epoch.csv"))[0]
        ranks = rows(self.path("o", "per_rank.csv"))
        for name in ("throughput_samples_per_second", "dlio_throughput_samples_per_second"):
            self.assertIn(name, ranks[0])
            self.assertAlmostEqual(sum(float(r[name]) for r in ranks), float(epoch[name]), delta=0.01 * float(epoch[name]))
        s = self.summary("o")
        self.assertAlmostEqual(float(epoch["dlio_throughput_samples_per_second"]),
                               s["metric"]["train_throughput_samples_per_second"][0], delta=1e-3)


class TimeLimitTest(TrainioTest):
    def test_samples_count_what_training_consumed_not_what_readers_fetched_ahead(self):
        # A time limit stops training between steps while the readers have fetched batches ahead.
        self.ok("run", "default", *SMALL, "dataset.num_files_train=4096", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "reader.batch_size=4", "reader.read_threads=2", "reader.prefetch_size=4",
                "train.epochs=1", "train.computation_time=0.01", "train.max_seconds=0.3", "--output", "o")
        t = self.summary("o")["trainio"]["epochs"][0]["train"]
        self.assertLess(t["steps_per_rank"], 4096 // 4)
        out = self.read_json("o", "0_output.json")["1"]
        steps = sum(len(v) for v in out["load"].values())
        self.assertEqual(t["samples"], steps * 4)
        self.assertEqual(t["sample_bytes"], steps * 4 * 4096)
        self.assertGreaterEqual(t["bytes_read"], t["sample_bytes"])
